import type { Readable } from 'node:stream';
import { chaptersOf, type Chapter } from '../../lib/chapters';
import { runProcess } from '../child-process';
import { guardInputs, httpHeaderOptions } from './input-policy';
import { FfmpegError, OVERSIZED } from './media-problems';

export interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  /** With countPackets: packets demuxed (for video, the frame count, without decoding). */
  nb_read_packets?: string;
  duration?: string | number;
  sample_rate?: string | number;
  channels?: number;
  channel_layout?: string;
}

export interface ProbeResult {
  format: { format_name?: string; duration?: number; size?: number; bit_rate?: number };
  streams: ProbeStream[];
  /** The container's chapters (absent: none, or a probe recorded before they were read). */
  chapters?: Chapter[];
}

export interface TranscodeRequest {
  /** A local file (or, with proxyUrl, an http(s) URL read through the egress proxy). */
  input: string;
  proxyUrl?: string;
  output: string;
  /** Input options, e.g. ['-ss', '5']. */
  inputOptions?: string[];
  /** Output options, e.g. ['-c:v', 'libx264']. */
  outputOptions: string[];
  /** Container for -f, when the extension does not say it. */
  format?: string;
  /** Expected output duration, for progress; seconds. */
  durationHint?: number | null;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** A raw ffmpeg run: inputs, filters and outputs are the caller's; progress comes from `-progress`. */
export interface FfmpegRunRequest {
  /** Arguments after the global options, e.g. ['-i', src, '-af', 'loudnorm', '-f', 'null', '-']; each input is guarded (input-policy). */
  args: string[];
  /** The egress proxy URL of this run, needed when an input is an http(s) URL. */
  proxyUrl?: string;
  /** Expected output duration, for progress; seconds. */
  durationHint?: number | null;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
  /** Each line ffmpeg logs (filters such as silencedetect and ebur128 log their measurements). */
  onLogLine?: (line: string) => void;
  /**
   * Streams the output to the caller instead of to a file: the args' output is `pipe:1`, and this
   * reads it at its own pace (ffmpeg waits while it is not read), so nothing is written to disk.
   */
  consumeStdout?: (stdout: Readable) => Promise<void>;
}

export interface FfmpegEngine {
  /** ffprobe of a local file, or of a URL through the egress proxy (with the request headers a platform needs). */
  probe(input: string, opts?: { proxyUrl?: string; signal?: AbortSignal; headers?: Record<string, string>; countPackets?: boolean }): Promise<ProbeResult>;
  transcode(req: TranscodeRequest): Promise<void>;
  /**
   * Runs ffmpeg; resolves with the tail of its log and the last `-progress` block (frame, out_time_us, …).
   * Rejects with the last log lines when it fails.
   */
  run(req: FfmpegRunRequest): Promise<{ log: string; progress: Record<string, string> }>;
}

/** The system ffmpeg/ffprobe as child processes, every input guarded by the input policy. */
export function createFfmpegEngine(opts: { ffmpegPath: string; ffprobePath: string; maxSourcePixels?: number }): FfmpegEngine {
  /** `-progress` prints key=value blocks on stdout (fd 3 when stdout carries the output); out_time_us drives onProgress. */
  async function run(req: FfmpegRunRequest): Promise<{ log: string; progress: Record<string, string> }> {
    const args = ['-hide_banner', '-nostdin', '-nostats', '-progress', req.consumeStdout ? 'pipe:3' : 'pipe:1', ...guardInputs(req.args, req.proxyUrl, opts.maxSourcePixels)];
    const progress: Record<string, string> = {};
    const res = await runProcess(opts.ffmpegPath, {
      args,
      signal: req.signal,
      consumeStdout: req.consumeStdout,
      onLine: (line, stream) => {
        if (stream === 'stderr') return req.onLogLine?.(line);
        const eq = line.indexOf('=');
        if (eq > 0) progress[line.slice(0, eq)] = line.slice(eq + 1).trim();
        if (!req.onProgress) return;
        if (line === 'progress=end') return req.onProgress(1);
        const m = /^out_time_(?:us|ms)=(\d+)$/.exec(line);
        if (m && req.durationHint) req.onProgress(Math.max(0, Math.min(1, Number(m[1]) / 1e6 / req.durationHint)));
      },
    });
    if (req.signal?.aborted) throw new Error('ffmpeg cancelled');
    if (res.code !== 0) {
      const tail = res.stderr.trim().split('\n').slice(-3).join(' | ');
      throw new FfmpegError(`ffmpeg failed with exit code ${String(res.code)}${tail ? ` (${tail})` : ''}`, res.stderr);
    }
    return { log: res.stderr, progress };
  }

  return {
    async probe(input, popts = {}) {
      const count = popts.countPackets ? ['-count_packets'] : [];
      const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '-show_chapters', ...count, ...guardInputs([...httpHeaderOptions(popts.headers), '-i', input], popts.proxyUrl, opts.maxSourcePixels)];
      const res = await runProcess(opts.ffprobePath, { args, signal: popts.signal });
      type Probed = { format?: Record<string, unknown>; streams?: ProbeStream[]; chapters?: unknown[] };
      let data: Probed | null = null;
      try {
        data = res.code === 0 ? (JSON.parse(res.stdout) as Probed) : null;
      } catch {
        data = null;
      }
      // a picture over the budget is not decoded, and ffprobe still exits 0: it is refused here
      if (OVERSIZED.test(res.stderr)) throw new FfmpegError('ffprobe refused a picture over the pixel budget', res.stderr);
      if (!data?.format) throw new FfmpegError(`ffprobe could not read the media: ${res.stderr.trim().split('\n')[0] || `exit code ${String(res.code)}`}`, res.stderr);
      const f = data.format;
      const chapters = chaptersOf(data.chapters, num(f.duration));
      return { format: { format_name: f.format_name as string | undefined, duration: num(f.duration), size: num(f.size), bit_rate: num(f.bit_rate) }, streams: data.streams ?? [], ...(chapters.length ? { chapters } : {}) };
    },

    transcode(req) {
      const args = [...(req.inputOptions ?? []), '-i', req.input, '-y', ...req.outputOptions, ...(req.format ? ['-f', req.format] : []), req.output];
      return run({ args, proxyUrl: req.proxyUrl, durationHint: req.durationHint, signal: req.signal, onProgress: req.onProgress }).then(() => undefined);
    },

    run,
  };
}

function num(v: unknown): number | undefined {
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}
