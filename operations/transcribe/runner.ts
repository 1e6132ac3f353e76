import { patched } from '@temporalio/workflow';
import { mediaSpeech } from '../../workflows/activity-proxies';
import { fetchSpeechSources } from '../../workflows/speech-sources';
import type { OperationRunner } from '../define';
import type { TranscribeParams } from './spec';

/** Transcribe: fetch the audio within the limits (media-fetch), then recognition and the transcript file (media-speech). */
export const runTranscribe: OperationRunner<TranscribeParams> = async ({ jobId, params, plan }) => {
  const { sourceFile, references } = await fetchSpeechSources(jobId, plan, params);
  if (!patched('speech-steps-v1')) return mediaSpeech.transcribe({ jobId, sourceFile, params, progressRange: [15, 99] });
  const recognition = await mediaSpeech.recognizeSpeech({ jobId, sourceFile, request: { kind: 'transcribe', params }, progressRange: [15, 99], ...(references ? { references } : {}) });
  return mediaSpeech.writeTranscript({ jobId, params, recognition });
};
