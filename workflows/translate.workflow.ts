import type { JobOutput, TranslateParams } from '../lib/job.types';
import { fetch, speech } from './activities';

/** Translate: as transcribe, then Whisper's English translation and/or Apertium, on media-speech. */
export async function runTranslate(jobId: string, params: TranslateParams): Promise<JobOutput> {
  // one yt-dlp run: limits, download and metadata together (the job's overhead over bare Whisper)
  const { sourceFile } = await fetch.fetchSource({ jobId, url: params.url, quality: 'audio', format: null, progressRange: [0, 15] });
  return speech.translate({ jobId, sourceFile, params, progressRange: [15, 99] });
}
