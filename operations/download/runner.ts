import { patched } from '@temporalio/workflow';
import { clipProblem, SUBTITLE_COST, SUBTITLE_SPEECH_MODEL, subtitlesCost } from '../../lib/download-plan';
import { JobFailure } from '../../lib/job-failure';
import { parseTimeString } from '../../lib/time';
import { mediaFetch, mediaProcess, mediaSpeech } from '../../workflows/activity-proxies';
import type { SpeechRequest } from '../../activities/speech/recognition';
import type { SubtitleTrack } from '../../activities/speech/subtitle-tracks';
import { sourceOf } from '../../lib/uploads';
import type { OperationRunner } from '../define';
import type { DownloadParams } from './spec';

/** Download: check limits, fetch the rendition, deliver it in the requested format (clipped and processed if asked). */
export const runDownload: OperationRunner<DownloadParams> = async ({ jobId, params, plan }) => {
  const clipStart = params.clip_start === null ? null : parseTimeString(params.clip_start);
  const clipEnd = params.clip_end === null ? null : parseTimeString(params.clip_end);
  const processing = params.processing ?? [];
  if (patched('source-once-v1')) {
    // one step for the source: limits, clip range and download from a single yt-dlp extraction (none for a plain file)
    const plain = clipStart === null && clipEnd === null && processing.length === 0;
    const asked = params.subtitles ?? null;
    const platformLanguages = asked && asked.source !== 'speech' ? asked.languages : [];
    const fetched = asked ? 30 : plain ? 80 : 50;
    const source = await mediaFetch.resolveSource({
      jobId, plan, url: sourceOf(params), quality: params.quality, format: params.format, reads: 'whole', clipStart, clipEnd, progressRange: [0, fetched],
      ...(platformLanguages.length ? { subtitles: platformLanguages } : {}),
    });
    const sourceFile = source.sourceFile!;
    const subtitles = asked ? await subtitleTracks(jobId, sourceFile, asked, source.subtitleFiles ?? [], [fetched, 70]) : null;
    const from = asked ? 70 : plain ? 80 : 50;
    const withTracks = subtitles ? { subtitles: { mode: asked!.mode, tracks: subtitles.tracks } } : {};
    // the fetch's probe of the file, where it made one, spares the next step another ffprobe
    const downloaded = { jobId, sourceFile, sourceProbe: source.sourceProbe, quality: params.quality, format: params.format, title: source.title, progressRange: [from, 99] as [number, number], ...withTracks };
    const output = plain ? await mediaProcess.finalizeDownload(downloaded) : await mediaProcess.processDownload({ ...downloaded, clipStart, clipEnd, processing });
    return subtitles && subtitles.unused > 0 ? { ...output, creditsUnused: subtitles.unused } : output;
  }
  const source = await mediaFetch.probeSource(sourceOf(params));
  if (clipStart === null && clipEnd === null && processing.length === 0) {
    // The plain path: exactly these three activities (recorded histories replay against it).
    const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality: params.quality, format: params.format, progressRange: [0, 80] });
    return mediaProcess.finalizeDownload({ jobId, sourceFile, quality: params.quality, format: params.format, title: source.title, progressRange: [80, 99] });
  }
  // A clip past the end is known once the source is probed: fail before downloading anything.
  const problem = source.duration === null ? null : clipProblem(clipStart, clipEnd, source.duration);
  if (problem) throw JobFailure.user('rejected', problem);
  const sourceFile = await mediaFetch.downloadSource({ jobId, url: sourceOf(params), quality: params.quality, format: params.format, progressRange: [0, 50] });
  return mediaProcess.processDownload({
    jobId,
    sourceFile,
    quality: params.quality,
    format: params.format,
    title: source.title,
    clipStart,
    clipEnd,
    processing,
    progressRange: [50, 99],
  });
};

/**
 * The download's subtitle tracks: the platform's where it has the language (unless speech was asked
 * for), speech recognised once for the rest (with Whisper's English pass when English is among them)
 * and translated; and the credits charged for speech that was not needed.
 */
async function subtitleTracks(
  jobId: string,
  sourceFile: string,
  asked: NonNullable<DownloadParams['subtitles']>,
  platform: { language: string; file: string }[],
  [from, to]: [number, number],
): Promise<{ tracks: SubtitleTrack[]; unused: number }> {
  const missing = asked.languages.filter((l) => !platform.some((p) => p.language === l));
  if (asked.source === 'platform' && missing.length) {
    const has = platform.map((p) => p.language);
    throw JobFailure.user('unavailable', `The platform has no subtitles in ${missing.join(', ')}${has.length ? ` (it has ${has.join(', ')} of those asked for)` : ''}; ask for source "speech" or "auto" to recognise them from the audio`);
  }
  const common = { url: sourceFile, output_format: 'json' as const, model_size: SUBTITLE_SPEECH_MODEL, diarize: false, num_speakers: null, known_speakers: [], multichannel: false, webhook_url: null };
  const request: SpeechRequest = missing.includes('en')
    ? { kind: 'translate', params: { ...common, source_language: null, target_language: 'en', source_type: 'media' } }
    : { kind: 'transcribe', params: { ...common, language: null, word_timestamps: false } };
  const recognition = missing.length ? await mediaSpeech.recognizeSpeech({ jobId, sourceFile, request, progressRange: [from, to - 2] }) : null;
  const tracks = await mediaSpeech.subtitleTracks({ jobId, languages: asked.languages, platform, recognition });
  const used = (recognition ? SUBTITLE_COST.speech : 0) + SUBTITLE_COST.translation * tracks.filter((t) => t.source === 'translation').length;
  return { tracks, unused: Math.max(0, subtitlesCost(asked) - used) };
}
