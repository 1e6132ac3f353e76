import { patched } from '@temporalio/workflow';
import { mediaFetch, mediaSpeech } from '../../workflows/activity-proxies';
import { sourceOf } from '../../lib/uploads';
import { fetchSpeechSources } from '../../workflows/speech-sources';
import type { OperationRunner } from '../define';
import type { TranslateParams } from './spec';

/**
 * Translate: as transcribe, then the text translation as a step of its own (Whisper's English and/or
 * Apertium), so retrying it never redoes the recognition.
 */
export const runTranslate: OperationRunner<TranslateParams> = async ({ jobId, params, plan }) => {
  if (params.source_type === 'subtitles') {
    // a subtitle file: its cues are translated, nothing is recognised
    const file = await mediaFetch.fetchTextSource({ jobId, url: sourceOf(params) });
    return mediaSpeech.translateSubtitleFile({ jobId, params, file, progressRange: [20, 99] });
  }
  const { sourceFile, references } = await fetchSpeechSources(jobId, plan, params);
  if (!patched('speech-steps-v1')) return mediaSpeech.translate({ jobId, sourceFile, params, progressRange: [15, 99] });
  const recognition = await mediaSpeech.recognizeSpeech({ jobId, sourceFile, request: { kind: 'translate', params }, progressRange: [15, 93], ...(references ? { references } : {}) });
  return mediaSpeech.translateTranscript({ jobId, params, recognition, progressRange: [93, 99] });
};
