import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../lib/config';
import { isUploadId } from '../lib/uploads';

/** An upload's name and content type, stored with it. */
export interface UploadInfo {
  filename: string;
  content_type: string;
  /** Seconds, as measured when it was received (absent: unknown). */
  duration?: number | null;
}

/** An inclusive byte range. */
export interface ByteRange {
  start: number;
  end: number;
}

type StorageConfig = Pick<Config, 'filesDir' | 'workDir' | 'uploadsDir'>;

/**
 * Where jobs' outputs and users' uploads are kept, and the scratch folders of the jobs a process runs.
 * Scratch folders are always on the process's own disk; outputs and uploads are on it too (local), or
 * in an S3-compatible bucket (s3), so that processes on different machines share nothing else.
 *
 * A step writes an output at `outputPath` and then `commitOutput`s it: the job completes only once
 * its output is where every API process can serve it.
 */
export abstract class Storage {
  constructor(protected readonly config: StorageConfig) {}

  /** Scratch folder of one job; removed when the job ends. */
  workDirOf(jobId: string): string {
    return path.join(this.config.workDir, safe(jobId));
  }

  /** Folders on this machine where the job's outputs are written before they are committed (none when they go to a bucket). */
  localOutputDirs(_jobId: string): string[] {
    return [];
  }

  /** Removes the job's work folder on this machine. */
  async removeWorkDir(jobId: string): Promise<void> {
    await fs.rm(this.workDirOf(jobId), { recursive: true, force: true });
  }

  /** When the job ends: its work folder, and whatever of it its steps shared with each other. */
  async removeJobWork(jobId: string): Promise<void> {
    await this.removeWorkDir(jobId);
  }

  /**
   * True where a job's steps may run on machines that share no disk: each step then passes the files
   * a later step reads (a downloaded source, recognised speech) through storage, and its scratch
   * folder goes when the step ends.
   */
  readonly stepsShareNoDisk: boolean = false;

  /** Makes a file of the job's work folder (relative to it) readable by the job's later steps, wherever they run. */
  async shareWorkFile(_jobId: string, _relative: string): Promise<void> {}

  /** A file of the job's work folder that an earlier step wrote or shared, on this machine. */
  async workFile(jobId: string, relative: string): Promise<string> {
    return this.workFilePath(jobId, relative);
  }

  protected workFilePath(jobId: string, relative: string): string {
    const dir = this.workDirOf(jobId);
    const abs = path.resolve(dir, relative);
    if (!abs.startsWith(dir + path.sep)) throw new Error('work file escapes the job folder');
    return abs;
  }

  /** Relative output path for a job's result, `{jobId}/{name}`: its name in storage. */
  outputRelative(jobId: string, name: string): string {
    return path.posix.join(safe(jobId), name);
  }

  /** Where a step writes an output (on this machine), before commitOutput. */
  abstract outputPath(relative: string): string;
  /** Makes a written output servable by every API process; a retried step commits again. */
  abstract commitOutput(relative: string): Promise<void>;
  /** A stored output's size in bytes, or null when it is no longer stored. */
  abstract outputSize(relative: string): Promise<number | null>;
  /** A stored output's bytes, whole or the inclusive byte range (which outputSize has bounded). */
  abstract openOutput(relative: string, range?: ByteRange): Promise<Readable>;
  /** A stored output's bytes in memory (small outputs only); null when it is no longer stored or larger than maxBytes. */
  abstract readOutput(relative: string, maxBytes?: number): Promise<Buffer | null>;
  /** Removes every output of a job. */
  abstract removeOutput(jobId: string): Promise<void>;
  /**
   * A URL the client may fetch the output from itself for `seconds`, or null where downloads are
   * streamed through the API (local storage, or S3_DOWNLOADS=stream).
   */
  abstract directOutputUrl(relative: string, seconds: number, filename: string): Promise<string | null>;

  /** A stored output as UTF-8 text; null when it is no longer stored or larger than maxBytes. */
  async readOutputText(relative: string, maxBytes = Number.POSITIVE_INFINITY): Promise<string | null> {
    return (await this.readOutput(relative, maxBytes))?.toString('utf8') ?? null;
  }

  /** Where the API receives an upload's bytes (on this machine; the id is checked, never a path), before commitUpload. */
  uploadPath(uploadId: string): string {
    if (!isUploadId(uploadId)) throw new Error(`unsafe upload id ${uploadId}`);
    return path.join(this.config.uploadsDir, uploadId);
  }

  /** Keeps a received upload, with what a worker needs to know of it without the database (its name, type and duration). */
  abstract commitUpload(uploadId: string, info: UploadInfo): Promise<void>;
  abstract readUploadInfo(uploadId: string): Promise<UploadInfo | null>;
  /** Puts an upload's bytes at `dest` on this machine (a job's work folder); false when it is no longer stored. */
  abstract fetchUpload(uploadId: string, dest: string): Promise<boolean>;
  abstract removeUpload(uploadId: string): Promise<void>;

  /** Resolves when the store answers (readiness); rejects with why not. Local storage has nothing to reach. */
  async checkReachable(_signal?: AbortSignal): Promise<void> {}

  /** Removes bodies whose upload never finished (its process died mid-stream), last written before `before`. */
  async removeAbandonedUploads(before: Date): Promise<void> {
    const names = await fs.readdir(this.config.uploadsDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith('.part'))) {
      const full = path.join(this.config.uploadsDir, name);
      const st = await fs.stat(full).catch(() => null);
      if (st && st.mtime < before) await fs.rm(full, { force: true });
    }
  }
}

/** Outputs and uploads under DATA_DIR. Across machines, every process mounts the same DATA_DIR. */
export class LocalStorage extends Storage {
  override localOutputDirs(jobId: string): string[] {
    return [path.dirname(this.outputPath(this.outputRelative(jobId, 'x')))];
  }

  /** Absolute path of a job output, given its path relative to the files directory. */
  outputPath(relative: string): string {
    const abs = path.resolve(this.config.filesDir, relative);
    if (!abs.startsWith(path.resolve(this.config.filesDir) + path.sep)) throw new Error('output path escapes the files directory');
    return abs;
  }

  /** Written in place: nothing to do. */
  async commitOutput(): Promise<void> {}

  async outputSize(relative: string): Promise<number | null> {
    const stat = await fs.stat(this.outputPath(relative)).catch(() => null);
    return stat?.isFile() ? stat.size : null;
  }

  async openOutput(relative: string, range?: ByteRange): Promise<Readable> {
    return createReadStream(this.outputPath(relative), range);
  }

  async readOutput(relative: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    const size = await this.outputSize(relative);
    if (size === null || size > maxBytes) return null;
    return fs.readFile(this.outputPath(relative)).catch(() => null);
  }

  async removeOutput(jobId: string): Promise<void> {
    await fs.rm(path.join(this.config.filesDir, safe(jobId)), { recursive: true, force: true });
  }

  async directOutputUrl(): Promise<string | null> {
    return null;
  }

  async commitUpload(uploadId: string, info: UploadInfo): Promise<void> {
    await fs.writeFile(`${this.uploadPath(uploadId)}.json`, JSON.stringify(info));
  }

  async readUploadInfo(uploadId: string): Promise<UploadInfo | null> {
    try {
      return JSON.parse(await fs.readFile(`${this.uploadPath(uploadId)}.json`, 'utf8')) as UploadInfo;
    } catch {
      return null;
    }
  }

  async fetchUpload(uploadId: string, dest: string): Promise<boolean> {
    const stored = this.uploadPath(uploadId);
    if (!(await fs.stat(stored).catch(() => null))) return false;
    // the job's folder is removed when it ends: a link leaves the upload itself in place
    await fs.link(stored, dest).catch(() => fs.copyFile(stored, dest));
    return true;
  }

  async removeUpload(uploadId: string): Promise<void> {
    await fs.rm(this.uploadPath(uploadId), { force: true });
    await fs.rm(`${this.uploadPath(uploadId)}.json`, { force: true });
  }
}

export function safe(id: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(id)) throw new Error(`unsafe job id ${id}`);
  return id;
}
