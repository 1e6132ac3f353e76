import type { JobOutput, TranscribeParams } from '../lib/job.types';
import { fetch, speech } from './activities';

/** Transcribe: fetch the audio within the limits (media-fetch), then 16 kHz WAV + faster-whisper (media-speech). */
export async function runTranscribe(jobId: string, params: TranscribeParams): Promise<JobOutput> {
  // one yt-dlp run: limits, download and metadata together (the job's overhead over bare Whisper)
  const { sourceFile } = await fetch.fetchSource({ jobId, url: params.url, quality: 'audio', format: null, progressRange: [0, 15] });
  return speech.transcribe({ jobId, sourceFile, params, progressRange: [15, 99] });
}
