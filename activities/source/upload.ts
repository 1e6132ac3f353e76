// An uploaded file as a job's source: read from storage, not the network (no egress, no yt-dlp).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FfmpegEngine } from '../../engines/ffmpeg/ffmpeg.engine';
import { extensionOf, mediaContentType } from '../../engines/media-sniff';
import type { Storage } from '../../engines/storage';
import { JobFailure } from '../../lib/job-failure';
import { tooLongMessage, type SourceLimits } from '../../lib/plans';
import { downloadFolder } from './source-facts';

export interface UploadedSource {
  /** The upload's bytes in the job's work folder, relative to it. */
  sourceFile: string;
  title: string;
  duration: number | null;
}

/** Puts upload `uploadId` in the job's work folder (from storage: a hard link on local disk, a download from the bucket) and measures it against the limits. */
export async function takeUpload(deps: { storage: Storage; ffmpeg: FfmpegEngine }, jobId: string, uploadId: string, limits: SourceLimits, slot?: string): Promise<UploadedSource> {
  const { storage, ffmpeg } = deps;
  const gone = () => JobFailure.user('unavailable', `Upload ${uploadId} is no longer stored: it expired before the job ran; upload the file again`);
  const workDir = storage.workDirOf(jobId);
  const folder = downloadFolder(workDir, slot);
  const received = path.join(folder, 'upload');
  await fs.mkdir(path.dirname(received), { recursive: true });
  await fs.rm(received, { force: true });
  const withinLimit = (duration: number | null) => {
    if (duration !== null && duration > limits.maxSeconds) throw JobFailure.user('rejected', tooLongMessage(limits, duration));
    return duration;
  };
  // measured when it was received (checked before any bytes move); an upload stored without its info is measured again
  const info = await storage.readUploadInfo(uploadId);
  if (info) withinLimit(info.duration ?? null);
  if (!(await storage.fetchUpload(uploadId, received))) throw gone();
  const probed = info ? null : await ffmpeg.probe(received);
  const contentType = info?.content_type ?? mediaContentType(probed?.format.format_name ?? '', Boolean(probed?.streams.some((s) => s.codec_type === 'video')));
  const duration = info ? (info.duration ?? null) : withinLimit(probed?.format.duration ?? null);
  // the tools read the container from the name
  const file = path.join(folder, `source.${extensionOf(contentType)}`);
  await fs.rm(file, { force: true });
  await fs.rename(received, file);
  const title = (info?.filename ?? 'upload').replace(/\.[^.]+$/, '') || 'upload';
  return { sourceFile: path.relative(workDir, file), title, duration };
}
