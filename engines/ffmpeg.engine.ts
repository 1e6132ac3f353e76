import ffmpeg from 'fluent-ffmpeg';

export interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  duration?: string | number;
  sample_rate?: string | number;
  channels?: number;
}

export interface ProbeResult {
  format: { format_name?: string; duration?: number; size?: number; bit_rate?: number };
  streams: ProbeStream[];
}

export interface TranscodeRequest {
  input: string;
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

export interface FfmpegEngine {
  probe(file: string): Promise<ProbeResult>;
  transcode(req: TranscodeRequest): Promise<void>;
}

/** fluent-ffmpeg over the system ffmpeg/ffprobe. */
export function createFfmpegEngine(opts: { ffmpegPath: string; ffprobePath: string }): FfmpegEngine {
  return {
    probe(file) {
      return new Promise((resolve, reject) => {
        const cmd = ffmpeg(file).setFfprobePath(opts.ffprobePath);
        cmd.ffprobe((err, data) => {
          if (err) return reject(new Error(`ffprobe could not read the media: ${firstLine(err)}`));
          resolve({
            format: {
              format_name: data.format.format_name,
              duration: num(data.format.duration),
              size: num(data.format.size),
              bit_rate: num(data.format.bit_rate),
            },
            streams: data.streams as ProbeStream[],
          });
        });
      });
    },

    transcode(req) {
      return new Promise((resolve, reject) => {
        const cmd = ffmpeg(req.input)
          .setFfmpegPath(opts.ffmpegPath)
          .inputOptions(req.inputOptions ?? [])
          .outputOptions(['-y', ...req.outputOptions]);
        if (req.format) cmd.format(req.format);
        cmd.output(req.output);
        const onAbort = () => cmd.kill('SIGKILL');
        req.signal?.addEventListener('abort', onAbort, { once: true });
        cmd.on('progress', (p: { timemark?: string }) => {
          if (!req.onProgress || !req.durationHint || !p.timemark) return;
          const t = timemarkSeconds(p.timemark);
          if (t !== null) req.onProgress(Math.max(0, Math.min(1, t / req.durationHint)));
        });
        cmd.on('error', (err: Error, _stdout: string | null, stderr: string | null) => {
          req.signal?.removeEventListener('abort', onAbort);
          if (req.signal?.aborted) return reject(new Error('ffmpeg cancelled'));
          const tail = (stderr ?? '').trim().split('\n').slice(-3).join(' | ');
          reject(new Error(`ffmpeg failed: ${firstLine(err)}${tail ? ` (${tail})` : ''}`));
        });
        cmd.on('end', () => {
          req.signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        cmd.run();
      });
    },
  };
}

function num(v: unknown): number | undefined {
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function firstLine(err: unknown): string {
  return String(err instanceof Error ? err.message : err).split('\n')[0] ?? '';
}

function timemarkSeconds(mark: string): number | null {
  const m = /^(-?\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(mark);
  if (!m) return null;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}
