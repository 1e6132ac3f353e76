import type { VideoInfo } from '../lib/job.types';
import { fetchInfo } from './activities';

/** Synchronous metadata read: the API waits on this short workflow. */
export async function infoWorkflow(url: string): Promise<VideoInfo> {
  return fetchInfo.readInfo(url);
}
