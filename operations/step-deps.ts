// What the workers give an operation's own activities (outside the workflow sandbox).
import type { EgressProxy } from '../engines/egress/egress-proxy';
import type { FfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import type { SpeechEngines } from '../engines/speech/services';

/** What an operation's own activities are built from, on the worker of their queue. */
export interface StepDeps {
  config: Config;
  storage: Storage;
  ffmpeg: FfmpegEngine;
  /** The process's egress proxy: present on the queues whose tools fetch users' URLs. */
  egress?: EgressProxy;
  /** faster-whisper, its models and the text translator: present on the media-speech queue. */
  speech?: SpeechEngines;
}

/** The speech engines of the media-speech queue. */
export function speechOf(deps: { speech?: SpeechEngines }): SpeechEngines {
  if (!deps.speech) throw new Error('this queue needs the speech engines');
  return deps.speech;
}

/** The egress proxy of a queue whose workers fetch users' URLs. */
export function egressOf(deps: { egress?: EgressProxy }): EgressProxy {
  if (!deps.egress) throw new Error('this queue needs the egress proxy');
  return deps.egress;
}
