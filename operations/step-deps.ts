// What the workers give an operation's own activities (outside the workflow sandbox).
import type { EgressProxy } from '../engines/egress/egress-proxy';
import type { FfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';

/** What an operation's own activities are built from, on the worker of their queue. */
export interface StepDeps {
  config: Config;
  storage: Storage;
  ffmpeg: FfmpegEngine;
  /** The process's egress proxy: present on the queues whose tools fetch users' URLs. */
  egress?: EgressProxy;
}

/** The egress proxy of a queue whose workers fetch users' URLs. */
export function egressOf(deps: { egress?: EgressProxy }): EgressProxy {
  if (!deps.egress) throw new Error('this queue needs the egress proxy');
  return deps.egress;
}
