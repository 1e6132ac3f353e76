import fs from 'node:fs/promises';
import path from 'node:path';
import type { FfmpegEngine } from '../../engines/ffmpeg/ffmpeg.engine';
import { tooLargeMessage, tooLongMessage, type SourceLimits } from '../../lib/plans';

/** A download that has gone past a limit: why, in the job's words. */
export interface LimitExceeded {
  message: string;
}

/**
 * Watches a download folder while bytes arrive, so a source that never ends (or lies about its
 * size) is stopped at its limit rather than at the end of its bytes: the folder's size against the
 * size limit every second, and after every few MiB the duration of its largest file (ffprobe of
 * the partial file) against the duration limit. `signal` aborts the download when either is passed.
 */
export function watchDownload(dir: string, limits: SourceLimits, ffmpeg: FfmpegEngine, parent: AbortSignal) {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  let exceeded: LimitExceeded | null = null;
  let probedAt = 0;
  let busy = false;
  const stopWith = (message: string) => {
    exceeded = { message };
    controller.abort(new Error(message));
  };
  const check = async () => {
    const files = await filesOf(dir);
    const total = files.reduce((n, f) => n + f.size, 0);
    if (total > limits.maxBytes) return stopWith(tooLargeMessage(limits));
    if (total - probedAt < PROBE_EVERY_BYTES || !files.length) return;
    probedAt = total;
    const largest = files.reduce((a, b) => (b.size > a.size ? b : a));
    // a partial file whose index is still to come tells nothing yet: the size limit still holds
    // ffprobe's guess will do for a file still growing: the fetched file is measured exactly once it is whole
    const probe = await ffmpeg.probe(largest.file, { signal: controller.signal, exact: false }).catch(() => null);
    const seconds = probe?.format.duration;
    if (seconds && seconds > limits.maxSeconds) stopWith(tooLongMessage(limits));
  };
  const timer = setInterval(() => {
    if (busy || exceeded) return;
    busy = true;
    check()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, 1000);
  return {
    signal: controller.signal,
    /** The limit passed, if the download was stopped for one. */
    exceeded: (): LimitExceeded | null => exceeded,
    stop(): void {
      clearInterval(timer);
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}

const PROBE_EVERY_BYTES = 8 * 1024 ** 2;

async function filesOf(dir: string): Promise<Array<{ file: string; size: number }>> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const stats = await Promise.all(names.map(async (n) => ({ file: path.join(dir, n), size: (await fs.stat(path.join(dir, n)).catch(() => null))?.size ?? 0 })));
  return stats.filter((s) => s.size > 0 && !s.file.endsWith('.json'));
}
