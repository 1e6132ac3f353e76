import type { VideoInfo } from '../lib/video-info';
import { mediaInfo } from './activity-proxies';

/** Synchronous metadata read: the API waits on this short workflow. */
export async function infoWorkflow(url: string): Promise<VideoInfo> {
  return mediaInfo.readInfo(url);
}
