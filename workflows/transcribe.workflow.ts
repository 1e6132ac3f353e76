import type { JobOutput, TranscribeParams } from '../lib/job.types';
import { fetch, speech } from './activities';

/** Transcribe: check limits, fetch the audio (media-fetch), then 16 kHz WAV + faster-whisper (media-speech). */
export async function runTranscribe(jobId: string, params: TranscribeParams): Promise<JobOutput> {
  await fetch.probeSource(params.url);
  const sourceFile = await fetch.downloadSource({ jobId, url: params.url, quality: 'audio', format: null, progressRange: [0, 15] });
  return speech.transcribe({ jobId, sourceFile, params, progressRange: [15, 99] });
}
