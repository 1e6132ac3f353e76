import { patched } from '@temporalio/workflow';
import { mediaFetch, mediaSpeech } from '../../workflows/activity-proxies';
import { sourceOf } from '../../lib/uploads';
import type { OperationRunner } from '../define';
import type { TranscribeParams } from './spec';

/** Transcribe: fetch the audio within the limits (media-fetch), then recognition and the transcript file (media-speech). */
export const runTranscribe: OperationRunner<TranscribeParams> = async ({ jobId, params, plan }) => {
  // one yt-dlp run: limits, download and metadata together (the job's overhead over bare Whisper)
  const { sourceFile } = await mediaFetch.fetchSource({ jobId, plan, url: sourceOf(params), quality: 'audio', format: null, progressRange: [0, 15] });
  if (!patched('speech-steps-v1')) return mediaSpeech.transcribe({ jobId, sourceFile, params, progressRange: [15, 99] });
  const recognition = await mediaSpeech.recognizeSpeech({ jobId, sourceFile, request: { kind: 'transcribe', params }, progressRange: [15, 99] });
  return mediaSpeech.writeTranscript({ jobId, params, recognition });
};
