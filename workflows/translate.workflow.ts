import type { JobOutput, TranslateParams } from '../lib/job.types';
import { fetch, speech } from './activities';

/** Translate: as transcribe, then Whisper's English translation and/or Apertium, on media-speech. */
export async function runTranslate(jobId: string, params: TranslateParams): Promise<JobOutput> {
  await fetch.probeSource(params.url);
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: 'audio', format: null, progressRange: [0, 15] });
  return speech.translate({ jobId, sourceFile, params, progressRange: [15, 99] });
}
