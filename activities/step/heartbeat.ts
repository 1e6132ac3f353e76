import { Context } from '@temporalio/activity';
import type { ProgressDetails } from '../../lib/job-reports';

// The last progress an activity reported. Every heartbeat carries it: a heartbeat without details
// would replace the details Temporal shows, and the job's live progress would fall back to 0.
const lastProgress = new WeakMap<Context, ProgressDetails>();

function beat(ctx: Context): void {
  ctx.heartbeat(lastProgress.get(ctx));
}

/**
 * Maps a 0..1 fraction of this activity onto the job's [from, to] progress band and heartbeats it.
 * The band's start is reported at once, so a step that has just begun shows where the last one ended.
 */
export function progressReporter(range: [number, number]): (fraction: number) => void {
  const ctx = Context.current();
  let last = -1;
  if (!lastProgress.has(ctx)) {
    lastProgress.set(ctx, { progress: Math.round(range[0]) });
    beat(ctx);
  }
  return (fraction) => {
    const progress = Math.round(range[0] + (range[1] - range[0]) * Math.max(0, Math.min(1, fraction)));
    if (progress === last) return;
    last = progress;
    lastProgress.set(ctx, { ...lastProgress.get(ctx), progress });
    beat(ctx);
  };
}

/** How many of the latest recognised segments a heartbeat carries (a reader polling each second misses none). */
const RECENT_SEGMENTS = 32;

/** Adds a recognised segment's text to what this activity's heartbeats carry. */
export function segmentReporter(): (text: string) => void {
  const ctx = Context.current();
  let count = 0;
  let recent: string[] = [];
  return (text) => {
    count++;
    recent = [...recent, text].slice(-RECENT_SEGMENTS);
    lastProgress.set(ctx, { progress: lastProgress.get(ctx)?.progress ?? 0, recognised: { count, recent } });
    beat(ctx);
  };
}

/**
 * Heartbeats every second while a step runs, so a tool that prints nothing for a while still looks
 * alive and a cancellation reaches the activity within about a second (the worker's heartbeat
 * throttle is 1 s too).
 */
export function keepAlive(): () => void {
  const ctx = Context.current();
  beat(ctx);
  const timer = setInterval(() => beat(ctx), 1000);
  return () => clearInterval(timer);
}

/** Runs a step with keepAlive around it. */
export async function alive<T>(step: () => Promise<T>): Promise<T> {
  const stop = keepAlive();
  try {
    return await step();
  } finally {
    stop();
  }
}
