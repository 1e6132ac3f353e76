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
