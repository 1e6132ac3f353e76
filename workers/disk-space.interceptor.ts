import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { Storage } from '../engines/storage';
import { dependencyFault } from '../lib/dependency-faults';
import { diskSpace } from '../lib/disk-space';
import { JobFailure } from '../lib/job-failure';
import { log } from '../lib/logger';

/** What the tools write when a write fails for want of space (ffmpeg's stderr, Python's OSError). */
const NO_SPACE = /No space left on device|Disk quota exceeded|database or disk is full|\bENOSPC\b/i;

/** A step's error that says the disk is full, in Node's words, SQLite's, or a tool's output. */
export function isDiskFull(err: unknown): boolean {
  if (dependencyFault(err)?.dependency === 'disk') return true;
  if (!(err instanceof ApplicationFailure)) return err instanceof Error && NO_SPACE.test(err.message);
  return NO_SPACE.test(err.message) || (err.details ?? []).some((d) => typeof d === 'string' && NO_SPACE.test(d));
}

export const FILE_STORE_MESSAGE = "The service's file store did not answer, so the job's files could not be stored; the credits were refunded. Try again later, and contact support if it persists";
export const DISK_FULL_MESSAGE = "The server's storage was full, so the job's files could not be written; the credits were refunded. Try again later, and contact support if it persists";

/**
 * Steps that write under DATA_DIR, and a disk that is low or full (a bucket that stays away is
 * reported the same way, as the service's storage):
 * - below MIN_FREE_DISK_MB a new step waits (heartbeating, cancellable) until space is freed,
 *   rather than starting and failing half way; a retry does not wait, as its own earlier attempt's
 *   files may be what fills the disk until the job ends;
 * - a step that found the disk full removes the files it had begun (a partial download would keep
 *   the disk full, and with it both databases, until the job ended, which they must record), waits
 *   DISK_FULL_RETRY_SECONDS, then fails as the service's storage (never a path) and is retried by its
 *   retry policy: the job fails, refunded once, only when every attempt did.
 */
export class DiskSpaceInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly opts: { dir: string; storage: Storage; minFreeBytes: number; fullRetryMs: number; pollMs?: number }) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const ctx = Context.current();
    if (ctx.info.attempt === 1) await this.untilSpace(ctx);
    const jobId = (input.args[0] as { jobId?: unknown } | undefined)?.jobId;
    const folders = typeof jobId === 'string' ? [this.opts.storage.workDirOf(jobId), ...this.opts.storage.localOutputDirs(jobId)] : [];
    const before = new Set((await Promise.all(folders.map(filesUnder))).flat());
    try {
      return await next(input);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw err;
      // the bucket stayed away past the step's own patience: retried as such, and said so if every attempt fails
      if (dependencyFault(err)?.dependency === 'storage') throw JobFailure.dependency(FILE_STORE_MESSAGE);
      if (!isDiskFull(err)) throw err;
      const begun = (await Promise.all(folders.map(filesUnder))).flat().filter((f) => !before.has(f));
      await Promise.all(begun.map((f) => fs.rm(f, { force: true })));
      log.warn({ activity: ctx.info.activityType, attempt: ctx.info.attempt, removed_files: begun.length, err: err instanceof Error ? err.message : String(err) }, 'a step found the disk under DATA_DIR full; it removed the files it had begun, and fails to be retried');
      await ctx.sleep(this.opts.fullRetryMs);
      throw JobFailure.dependency(DISK_FULL_MESSAGE);
    }
  }

  private async untilSpace(ctx: Context): Promise<void> {
    let logged = false;
    for (;;) {
      const space = diskSpace(this.opts.dir, this.opts.minFreeBytes);
      if (!space?.low) return;
      if (!logged) log.warn({ activity: ctx.info.activityType, free_mb: Math.floor(space.freeBytes / 2 ** 20) }, 'free space under DATA_DIR is below MIN_FREE_DISK_MB; the step waits until space is freed');
      logged = true;
      await ctx.sleep(this.opts.pollMs ?? 2000);
    }
  }
}

/** Every file under a folder (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}
