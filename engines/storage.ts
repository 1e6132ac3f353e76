import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../lib/config';

/** Paths under DATA_DIR. In scale-out, every worker mounts the same DATA_DIR (shared volume). */
export class Storage {
  constructor(private readonly config: Pick<Config, 'filesDir' | 'workDir'>) {}

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

  /** Relative output path for a job's result, `{jobId}/{name}`. */
  outputRelative(jobId: string, name: string): string {
    return path.join(safe(jobId), name);
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
