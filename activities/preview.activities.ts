import fs from 'node:fs/promises';
import path from 'node:path';
import type { ProbeStream } from '../engines/ffmpeg/ffmpeg.engine';
import type { Storage } from '../engines/storage';
import type { JobOutput } from '../lib/jobs';
import type { PreviewParams } from '../lib/operations';
import { parseTimeString } from '../lib/time';
import { durationOf, roundMs } from './media-probe';
import { pastEnd, videoOf, withSource, type OpenedSource, type SourceReadDeps, type SourceRef } from './video-source';

export interface PreviewDeps extends SourceReadDeps {
  storage: Storage;
}

export interface MakePreviewInput extends SourceRef {
  jobId: string;
  params: PreviewParams;
  progressRange: [number, number];
}

/** Previews (ffmpeg) for the `media-process` queue. */
export function createPreviewActivities(deps: PreviewDeps) {
  const { ffmpeg, storage } = deps;

  return {
    /** gif, thumbnail, mosaic or clip; result_data is measured from the output file. */
    async makePreview(input: MakePreviewInput): Promise<JobOutput> {
      return withSource(deps, storage, input.jobId, input, (src) => render(input, src));
    },
  };

  async function render(input: MakePreviewInput, src: OpenedSource): Promise<JobOutput> {
      const p = input.params;
      const { probe, video, duration } = videoOf(await src.probe());
      const width = p.width;
      const ext = p.preview_type === 'gif' ? 'gif' : p.preview_type === 'clip' ? 'mp4' : 'jpg';
      const relative = storage.outputRelative(input.jobId, `preview.${ext}`);
      const out = storage.outputPath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      await fs.rm(out, { force: true }); // a retry must not measure an earlier attempt's file
      const at = (v: string | null, fallback: number) => (v === null ? fallback : (parseTimeString(v) ?? fallback));

      switch (p.preview_type) {
        case 'gif': {
          const start = at(p.start, 0);
          if (start >= duration) pastEnd('start', start, duration);
          const len = Math.min(p.duration ?? 5, duration - start);
          const graph = `[0:v:0]fps=${p.fps ?? 10},scale=${width}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[pal];[b][pal]paletteuse=dither=bayer:bayer_scale=5`;
          await src.run([...src.input(['-ss', start.toFixed(3), '-t', len.toFixed(3)]), '-filter_complex', graph, '-loop', '0', '-y', out], len, input.progressRange);
          break;
        }
        case 'thumbnail': {
          const t = at(p.timestamp, duration * 0.25);
          if (t >= duration) pastEnd('timestamp', t, duration);
          const args = [...src.input(['-ss', t.toFixed(3)]), '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${width}:-1:flags=lanczos`, '-q:v', '2', '-update', '1'];
          await src.run([...args, '-f', 'image2', '-c:v', 'mjpeg', '-y', out], 1, input.progressRange);
          break;
        }
        case 'mosaic': {
          const columns = p.columns ?? 4;
          const rows = p.rows ?? 4;
          const { inputs, graph } = mosaicGraph((before) => src.input(before), mosaicTimes(video, duration, columns * rows), columns, rows, width);
          await src.run([...inputs, '-filter_complex', graph, '-frames:v', '1', '-q:v', '2', '-update', '1', '-f', 'image2', '-c:v', 'mjpeg', '-y', out], 1, input.progressRange);
          break;
        }
        case 'clip': {
          const start = at(p.start, 0);
          if (start >= duration) pastEnd('start', start, duration);
          const len = Math.min(p.duration ?? 10, duration - start);
          const even = width - (width % 2); // H.264 in 4:2:0 needs even dimensions
          const hasAudio = probe.streams.some((s) => s.codec_type === 'audio');
          const args = [...src.input(['-ss', start.toFixed(3), '-t', len.toFixed(3)]), '-map', '0:v:0', ...(hasAudio ? ['-map', '0:a:0'] : [])];
          args.push('-vf', `scale=${even}:-2:flags=lanczos`, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p');
          if (hasAudio) args.push('-c:a', 'aac', '-b:a', '128k');
          await src.run([...args, '-movflags', '+faststart', '-y', out], len, input.progressRange);
          break;
        }
      }

      // packets of the output's video stream are its frames: counted while probing, without decoding it again
      const animated = p.preview_type === 'gif' || p.preview_type === 'clip';
      const result = await ffmpeg.probe(out, { countPackets: animated }).catch(() => null);
      const stream = result?.streams.find((s) => s.codec_type === 'video');
      if (!result || !stream?.width || !stream.height) throw src.unreadable('No frame could be taken from the source at that time');
      let outDuration = 0;
      let fps = 0;
      if (animated) {
        outDuration = roundMs(durationOf(result));
        const frames = Number(stream.nb_read_packets ?? 0);
        fps = outDuration > 0 ? Math.round(frames / outDuration) : 0;
      }
      const filesize = (await fs.stat(out)).size;
      await storage.commitOutput(relative);
      return {
        outputFile: relative,
        resultData: {
          preview_type: p.preview_type,
          width: stream.width,
          height: stream.height,
          duration: outDuration,
          fps,
          filesize,
        },
      };
  }
}

/**
 * Mosaic frame times: the middle of each of n equal parts of the video stream, never past its last
 * frame, so every tile shows a real frame (sampling with fps= after a seek could come up one short,
 * leaving the last tile black).
 */
export function mosaicTimes(video: ProbeStream, duration: number, n: number): number[] {
  const length = Number(video.duration) > 0 ? Math.min(Number(video.duration), duration) : duration;
  const [num, den] = (video.avg_frame_rate ?? '25/1').split('/').map(Number);
  const frame = num && den ? den / num : 0.04;
  const last = Math.max(0, length - 1.5 * frame);
  return Array.from({ length: n }, (_, i) => Math.min((length * (i + 0.5)) / n, last));
}

/** One fast-seeked input per tile (decoding only from the keyframe before each), the first frame of each, tiled. */
function mosaicGraph(input: (before: string[]) => string[], times: number[], columns: number, rows: number, width: number): { inputs: string[]; graph: string } {
  const tile = Math.ceil(width / columns);
  const inputs = times.flatMap((t) => input(['-ss', t.toFixed(3)]));
  const frames = times.map((_, i) => `[${i}:v:0]trim=end_frame=1,setpts=PTS-STARTPTS,scale=${tile}:-1:flags=lanczos,setsar=1[f${i}]`);
  const graph = `${frames.join(';')};${times.map((_, i) => `[f${i}]`).join('')}concat=n=${times.length}:v=1:a=0,tile=${columns}x${rows},scale=${width}:-1:flags=lanczos`;
  return { inputs, graph };
}
