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

/** Paths under DATA_DIR. In scale-out, every worker mounts the same DATA_DIR (shared volume). */
export class Storage {
  constructor(private readonly config: Pick<Config, 'filesDir' | 'workDir' | 'uploadsDir'>) {}

  /** Scratch folder of one job; removed when the job ends. */
  workDirOf(jobId: string): string {
    return path.join(this.config.workDir, safe(jobId));
  }

  /** Absolute path of a job output, given its path relative to the files directory. */
  filePath(relative: string): string {
    const abs = path.resolve(this.config.filesDir, relative);
    if (!abs.startsWith(path.resolve(this.config.filesDir) + path.sep)) throw new Error('output path escapes the files directory');
    return abs;
  }

  /** A stored output's size in bytes, or null when it is no longer stored. */
  async outputSize(relative: string): Promise<number | null> {
    const stat = await fs.stat(this.filePath(relative)).catch(() => null);
    return stat?.isFile() ? stat.size : null;
  }

  /** A stored output's bytes, whole or the inclusive byte range (which outputSize has bounded). */
  openOutput(relative: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.filePath(relative), range);
  }

  /** A stored output's bytes in memory (small outputs only); null when it is no longer stored or larger than maxBytes. */
  async readOutput(relative: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    const size = await this.outputSize(relative);
    if (size === null || size > maxBytes) return null;
    return fs.readFile(this.filePath(relative)).catch(() => null);
  }

  /** A stored output as UTF-8 text; null when it is no longer stored or larger than maxBytes. */
  async readOutputText(relative: string, maxBytes = Number.POSITIVE_INFINITY): Promise<string | null> {
    return (await this.readOutput(relative, maxBytes))?.toString('utf8') ?? null;
  }

  /** Relative output path for a job's result, `{jobId}/{name}`. */
  outputRelative(jobId: string, name: string): string {
    return path.join(safe(jobId), name);
  }

  /** Where an upload's bytes live (one file per upload id; the id is checked, never a path). */
  uploadPath(uploadId: string): string {
    if (!isUploadId(uploadId)) throw new Error(`unsafe upload id ${uploadId}`);
    return path.join(this.config.uploadsDir, uploadId);
  }

  /** What a worker knows of an upload without the database: its name and type, kept beside its bytes. */
  async writeUploadInfo(uploadId: string, info: UploadInfo): Promise<void> {
    await fs.writeFile(`${this.uploadPath(uploadId)}.json`, JSON.stringify(info));
  }

  async readUploadInfo(uploadId: string): Promise<UploadInfo | null> {
    try {
      return JSON.parse(await fs.readFile(`${this.uploadPath(uploadId)}.json`, 'utf8')) as UploadInfo;
    } catch {
      return null;
    }
  }

  async removeUpload(uploadId: string): Promise<void> {
    await fs.rm(this.uploadPath(uploadId), { force: true });
    await fs.rm(`${this.uploadPath(uploadId)}.json`, { force: true });
  }

  /** Removes bodies whose upload never finished (its process died mid-stream), last written before `before`. */
  async removeAbandonedUploads(before: Date): Promise<void> {
    const names = await fs.readdir(this.config.uploadsDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith('.part'))) {
      const full = path.join(this.config.uploadsDir, name);
      const st = await fs.stat(full).catch(() => null);
      if (st && st.mtime < before) await fs.rm(full, { force: true });
    }
  }

  async removeWorkDir(jobId: string): Promise<void> {
    await fs.rm(this.workDirOf(jobId), { recursive: true, force: true });
  }

  async removeOutput(jobId: string): Promise<void> {
    await fs.rm(path.join(this.config.filesDir, safe(jobId)), { recursive: true, force: true });
  }
}

function safe(id: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(id)) throw new Error(`unsafe job id ${id}`);
  return id;
}
