import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Probe {
  format: { format_name: string; duration: string; size: string };
  streams: { codec_type: string; codec_name: string; width?: number; height?: number; sample_rate?: string }[];
}

/** ffprobe's JSON for a file or URL, measured independently of the service's own probe code. */
export async function ffprobe(target: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', target]);
  return JSON.parse(stdout) as Probe;
}

export function videoStream(p: Probe) {
  return p.streams.find((s) => s.codec_type === 'video');
}

export function audioStream(p: Probe) {
  return p.streams.find((s) => s.codec_type === 'audio');
}

interface ProbeLike {
  format: { duration?: string | number; size?: string | number };
  streams: { codec_type?: string; codec_name?: string; width?: number; height?: number; avg_frame_rate?: string; nb_frames?: string; duration?: string | number }[];
}

const seconds = (v: string | number | undefined) => (v === undefined ? undefined : Math.round(Number(v) * 1000) / 1000);

/** What the seek-reading steps take from a probe: duration, size, and each audio and video stream's kind, codec, picture and frames. */
export function probeFields(p: ProbeLike) {
  return {
    duration: Number(p.format.duration),
    size: Number(p.format.size),
    streams: p.streams
      .filter((s) => s.codec_type === 'video' || s.codec_type === 'audio')
      .map((s) => (s.codec_type === 'video' ? { type: s.codec_type, codec: s.codec_name, width: s.width, height: s.height, rate: s.avg_frame_rate, frames: s.nb_frames, duration: seconds(s.duration) } : { type: s.codec_type, codec: s.codec_name, frames: s.nb_frames, duration: seconds(s.duration) })),
  };
}
