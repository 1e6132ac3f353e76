// The media a speech job fetches (media-fetch): its source, and beside it, at the same time, each
// known speaker's reference clip into a folder of its own. Workflow code.
import { sourceOf } from '../lib/uploads';
import type { PlanName } from '../lib/plans';
import type { SpeakerReference } from '../activities/speech/recognition';
import { mediaFetch } from './activity-proxies';

export interface SpeechSources {
  sourceFile: string;
  /** Absent when the job names no known speakers (and on jobs started before them). */
  references?: SpeakerReference[];
}

export async function fetchSpeechSources(jobId: string, plan: PlanName | undefined, params: { url?: string; upload_id?: string; known_speakers?: { name: string; url?: string; upload_id?: string }[] }): Promise<SpeechSources> {
  // one yt-dlp run: limits, download and metadata together (the job's overhead over bare Whisper)
  const source = mediaFetch.fetchSource({ jobId, plan, url: sourceOf(params), quality: 'audio', format: null, progressRange: [0, 15] });
  const known = params.known_speakers ?? [];
  if (known.length === 0) return { sourceFile: (await source).sourceFile };
  // the clips report no progress of their own: the source's fetch moves the job's
  const references = Promise.all(
    known.map(async (k, i) => ({ name: k.name, sourceFile: (await mediaFetch.fetchSource({ jobId, plan, url: sourceOf(k), quality: 'audio', format: null, progressRange: [0, 0], slot: `speaker-${i}` })).sourceFile })),
  );
  const [{ sourceFile }, refs] = await Promise.all([source, references]);
  return { sourceFile, references: refs };
}
