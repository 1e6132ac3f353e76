import { Context } from '@temporalio/activity';
import type { ProgressDetails } from '../lib/jobs';

/** Maps a 0..1 fraction of this activity onto the job's [from, to] progress band and heartbeats it. */
export function progressReporter(range: [number, number]): (fraction: number) => void {
  const ctx = Context.current();
  let last = -1;
  return (fraction) => {
    const progress = Math.round(range[0] + (range[1] - range[0]) * Math.max(0, Math.min(1, fraction)));
    if (progress === last) return;
    last = progress;
    ctx.heartbeat({ progress } satisfies ProgressDetails);
  };
}

/** Heartbeats on a timer so an activity whose tool prints nothing for a while still looks alive. */
export function keepAlive(): () => void {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 5000);
  return () => clearInterval(timer);
}
