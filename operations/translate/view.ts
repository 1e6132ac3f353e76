import { speechSegments, str, TOO_LARGE, type JobOutputView, type OutputContext } from '../output-view';

/** Original and translation side by side: per segment from JSON; SRT/VTT files hold only the translated cues, so then the whole texts from result_data. */
export async function showTranslation(job: OutputContext): Promise<JobOutputView> {
  const segments = await speechSegments(job);
  if (segments === null) return TOO_LARGE;
  const r = job.result;
  const aligned = (str(r.output_format) ?? 'json') === 'json' ? segments : [{ start: null, end: null, original: str(r.original_text) ?? '', text: str(r.translated_text) ?? '' }];
  return { kind: 'translation', sourceLanguage: str(r.source_language), targetLanguage: str(r.target_language), segments: aligned };
}
