import { speechSegments, str, TOO_LARGE, type JobOutputView, type OutputContext } from '../output-view';

/** The transcript's segments with their times. */
export async function showTranscript(job: OutputContext): Promise<JobOutputView> {
  const segments = await speechSegments(job);
  return segments === null ? TOO_LARGE : { kind: 'transcript', language: str(job.result.language), segments };
}
