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
  /** "16:15" and the like: the stored pixels' shape ("1:1" square; absent or "0:1" unknown). */
  sample_aspect_ratio?: string;
  /** The display matrix among them: `rotation` in degrees, as ffprobe reports it. */
  side_data_list?: { side_data_type?: string; rotation?: number }[];
  tags?: Record<string, string>;
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

export interface ProbeOptions {
  proxyUrl?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  countPackets?: boolean;
  /**
   * Whether ffprobe can seek in the input (a local file always; a URL whose origin serves byte
   * ranges, when the caller has checked). Unset for a URL: it is read as a stream.
   */
  seekable?: boolean;
  /** False: ffprobe's own duration, even a guess, never measured (a file still being written, watched against a limit). */
  exact?: boolean;
}

export interface FfmpegEngine {
  /**
   * ffprobe of a local file, or of a URL through the egress proxy (with the request headers a
   * platform needs). Its duration is the media's real length: where the container does not state
   * it, or ffprobe could only guess it (see durationIsStated), it is measured from the packets'
   * last timestamps.
   */
  probe(input: string, opts?: ProbeOptions): Promise<ProbeResult>;
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

  /**
   * The media's length from every packet's timestamps (demuxed, nothing decoded): the latest end
   * less the earliest start, over all streams, as ffmpeg counts a container's duration. Null
   * when no packet has a timestamp.
   */
  async function packetSpan(input: string, popts: ProbeOptions): Promise<number | null> {
    // bounded: a stream that never ends (or crawls) is given up on, and ffprobe's own figure stands
    const given = AbortSignal.timeout(PACKET_SCAN_MS);
    const signal = popts.signal ? AbortSignal.any([popts.signal, given]) : given;
    const args = ['-v', 'error', '-show_entries', 'packet=stream_index,pts_time,dts_time,duration_time', '-of', 'csv=p=0', ...guardInputs([...httpHeaderOptions(popts.headers), '-i', input], popts.proxyUrl, opts.maxSourcePixels)];
    let start = Infinity;
    let end = -Infinity;
    const res = await runProcess(opts.ffprobePath, {
      args,
      signal,
      keepStdout: false,
      onLine: (line, stream) => {
        if (stream !== 'stdout') return;
        const [, pts, dts, dur] = line.split(',');
        const at = Number(pts === 'N/A' ? dts : pts);
        if (!Number.isFinite(at)) return;
        start = Math.min(start, at);
        end = Math.max(end, at + (Number(dur) || 0));
      },
    });
    if (popts.signal?.aborted) throw new Error('ffprobe cancelled');
    if (given.aborted) return null;
    if (res.code !== 0 && !Number.isFinite(start)) return null;
    return Number.isFinite(start) && end > start ? end - start : null;
  }

  return {
    async probe(input, popts = {}) {
      const count = popts.countPackets ? ['-count_packets'] : [];
      // warnings too: ffmpeg says so when it could only estimate the duration from the bit rate
      const args = ['-v', 'warning', '-print_format', 'json', '-show_format', '-show_streams', '-show_chapters', ...count, ...guardInputs([...httpHeaderOptions(popts.headers), '-i', input], popts.proxyUrl, opts.maxSourcePixels)];
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
      if (!data?.format) throw new FfmpegError(`ffprobe could not read the media: ${res.stderr.trim().split('\n').find((l) => !BITRATE_GUESS.test(l)) || `exit code ${String(res.code)}`}`, res.stderr);
      const f = data.format;
      const streams = data.streams ?? [];
      const seekable = popts.seekable ?? !/^https?:\/\//i.test(input);
      let duration = num(f.duration);
      if (popts.exact !== false && !durationIsStated({ format_name: f.format_name as string | undefined, duration, streams, log: res.stderr, seekable })) duration = (await packetSpan(input, popts)) ?? duration;
      const chapters = chaptersOf(data.chapters, duration);
      return { format: { format_name: f.format_name as string | undefined, duration, size: num(f.size), bit_rate: num(f.bit_rate) }, streams, ...(chapters.length ? { chapters } : {}) };
    },

    transcode(req) {
      const args = [...(req.inputOptions ?? []), '-i', req.input, '-y', ...req.outputOptions, ...(req.format ? ['-f', req.format] : []), req.output];
      return run({ args, proxyUrl: req.proxyUrl, durationHint: req.durationHint, signal: req.signal, onProgress: req.onProgress }).then(() => undefined);
    },

    run,
  };
}

const BITRATE_GUESS = /Estimating duration from bitrate/i;

/** The longest a duration is measured from packets (a two-hour file streams in seconds on loopback). */
const PACKET_SCAN_MS = 60_000;

/**
 * Whether ffprobe's duration is the media's real length. Not when it has none (MPEG-TS, Ogg or
 * Matroska that do not state it, read as a stream), when ffmpeg says it guessed from the bit rate,
 * or for a fragmented MP4 read as a stream: its index holds no samples (no frame counts), and the
 * duration is the first fragment's. Read with seeks, ffmpeg takes the last timestamps of MPEG-TS
 * and Ogg, and every fragment's header, itself.
 */
export function durationIsStated(p: { format_name?: string; duration?: number; streams: ProbeStream[]; log: string; seekable: boolean }): boolean {
  if (!(p.duration !== undefined && p.duration > 0)) return false;
  if (BITRATE_GUESS.test(p.log)) return false;
  const media = p.streams.filter((s) => s.codec_type === 'video' || s.codec_type === 'audio');
  const fragmented = /\bmov\b|mp4/.test(p.format_name ?? '') && media.some((s) => !(Number(s.nb_frames) > 0));
  return p.seekable || !fragmented;
}

function num(v: unknown): number | undefined {
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}
