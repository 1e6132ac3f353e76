import { mediaFetch, mediaSpeech } from '../activity-proxies';
import type { OperationRunner } from './types';

/** Translate: as transcribe, then Whisper's English translation and/or Apertium, on media-speech. */
export const runTranslate: OperationRunner<'translate'> = async ({ jobId, params }) => {
  const { sourceFile } = await mediaFetch.fetchSource({ jobId, url: params.url, quality: 'audio', format: null, progressRange: [0, 15] });
  return mediaSpeech.translate({ jobId, sourceFile, params, progressRange: [15, 99] });
};
