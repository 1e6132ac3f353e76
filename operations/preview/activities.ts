import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { ProbeResult, ProbeStream } from '../../engines/ffmpeg/ffmpeg.engine';
import { readMp4File } from '../../engines/ffmpeg/mp4-index';
import { clipRecipe, gifRecipe, mosaicOnePassRecipe, mosaicReadsOnce, mosaicTileRuns, mosaicTimes, storyboardFiles, storyboardPlan, storyboardRecipe, thumbnailRecipe, type InputOf, type MosaicTileRuns, type PreviewRecipe } from '../../engines/ffmpeg/recipes/preview';
import type { Storage } from '../../engines/storage';
import type { JobOutput } from '../../lib/job-reports';
import { layOutSheet } from './mosaic-sheet';
import { PREVIEW_LIMITS, type PreviewParams } from './spec';
import { JobFailure } from '../../lib/job-failure';
import { parseTimeString } from '../../lib/time';
import { durationOf, roundMs } from '../../activities/step/media-probe';
import { pastEnd, videoOf, withSource, type OpenedSource, type SourceReadDeps, type SourceRef } from '../../activities/source/video-source';
import type { StepDeps } from '../step-deps';

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
    if (p.preview_type === 'storyboard') return storyboard(input, src);
    const ext = p.preview_type === 'gif' ? 'gif' : p.preview_type === 'clip' ? 'mp4' : 'jpg';
    const relative = storage.outputRelative(input.jobId, `preview.${ext}`);
    const out = storage.outputPath(relative);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.rm(out, { force: true }); // a retry must not measure an earlier attempt's file
    const tilesDir = path.join(storage.workDirOf(input.jobId), 'mosaic-tiles');
    const recipe = previewRecipe(p, { ...videoOf(await src.probe()), remote: src.remote }, (before) => src.input(before), out, tilesDir);
    if ('runs' in recipe) await mosaicBySeeks(src, recipe, tilesDir, out, input.progressRange);
    else await src.run(recipe.args, recipe.covers, input.progressRange);
    const measured = await measure(out, ext);
    if (!measured) throw src.unreadable('No frame could be taken from the source at that time');
    const filesize = (await fs.stat(out)).size;
    await storage.commitOutput(relative);
    return { outputFile: relative, resultData: { preview_type: p.preview_type, ...measured, filesize } };
  }

  /** A mosaic's tiles, a few seeks per ffmpeg run (so only a few decoders are open at once), then laid out on one sheet. */
  async function mosaicBySeeks(src: OpenedSource, plan: MosaicTileRuns, dir: string, out: string, [from, to]: [number, number]): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir, { recursive: true });
    const share = (to - from) / plan.runs.length;
    for (const [i, run] of plan.runs.entries()) await src.run(run.args, run.covers, [from + i * share, from + (i + 1) * share]);
    await layOutSheet(plan.tiles, plan.sheet, out);
    await fs.rm(dir, { recursive: true, force: true });
  }

  /** A storyboard: the sprite from one ffmpeg pass, then its WebVTT (the job's first file) and JSON, measured from the sprite. */
  async function storyboard(input: MakePreviewInput, src: OpenedSource): Promise<JobOutput> {
    const p = input.params;
    const { video, duration } = videoOf(await src.probe());
    const plan = storyboardPlan(video, duration, { interval: p.interval ?? null, columns: p.columns ?? PREVIEW_LIMITS.storyboard.columns.default, width: p.width });
    if (plan.count > PREVIEW_LIMITS.storyboard.tiles.max) {
      throw JobFailure.user('rejected', `An interval of ${plan.interval} s makes ${plan.count} tiles of this ${roundMs(duration)} s video; at most ${PREVIEW_LIMITS.storyboard.tiles.max}: ask for an interval of at least ${Math.ceil(duration / PREVIEW_LIMITS.storyboard.tiles.max)} s, or leave it out`);
    }
    const names = { vtt: 'storyboard.vtt', sprite: 'storyboard.jpg', json: 'storyboard.json' };
    const [vttRel, spriteRel, jsonRel] = [names.vtt, names.sprite, names.json].map((n) => storage.outputRelative(input.jobId, n)) as [string, string, string];
    const sprite = storage.outputPath(spriteRel);
    await fs.mkdir(path.dirname(sprite), { recursive: true });
    await fs.rm(sprite, { force: true });
    const recipe = storyboardRecipe((before) => src.input(before), plan, duration, sprite);
    await src.run(recipe.args, recipe.covers, input.progressRange);
    const image = await sharp(sprite).metadata().catch(() => null);
    if (!image?.width || !image.height) throw src.unreadable('No frame could be taken from the source for the storyboard');
    const tile = { width: Math.floor(image.width / plan.columns), height: Math.floor(image.height / plan.rows) };
    const files = storyboardFiles(plan, roundMs(duration), tile, names.sprite);
    await fs.writeFile(storage.outputPath(vttRel), files.vtt);
    await fs.writeFile(storage.outputPath(jsonRel), files.json);
    for (const rel of [spriteRel, jsonRel, vttRel]) await storage.commitOutput(rel);
    const filesize = (await fs.stat(sprite)).size;
    return {
      outputFile: vttRel,
      moreFiles: [spriteRel, jsonRel],
      resultData: {
        preview_type: 'storyboard',
        ...tile,
        duration: roundMs(duration),
        fps: 0,
        filesize,
        tiles: plan.count,
        interval: plan.interval,
        columns: plan.columns,
        rows: plan.rows,
        sprite: names.sprite,
        frames_from: plan.keyframes ? 'keyframes' : 'every_frame',
      },
    };
  }

  /** The output's size, and for animations its duration and frame rate; null when it holds no frame. */
  async function measure(out: string, ext: 'jpg' | 'gif' | 'mp4'): Promise<{ width: number; height: number; duration: number; fps: number } | null> {
    // a JPEG's size, a GIF's frames and their delays are in the file's headers: read in-process, without starting ffprobe
    if (ext !== 'mp4') {
      const image = await sharp(out).metadata().catch(() => null);
      if (!image?.width || !image.height) return null;
      if (ext === 'jpg') return { width: image.width, height: image.height, duration: 0, fps: 0 };
      const duration = roundMs((image.delay ?? []).reduce((sum, ms) => sum + ms, 0) / 1000);
      return { width: image.width, height: image.pageHeight ?? image.height, duration, fps: framesPerSecond(image.pages ?? 1, duration) };
    }
    // an MP4's index holds its size, duration and frame count: read in-process; ffprobe where it cannot be read
    const index = await readMp4File(out).catch(() => null);
    const video = index?.tracks.find((t) => t.kind === 'video');
    if (index && video) {
      const duration = roundMs(index.duration);
      return { width: video.width, height: video.height, duration, fps: framesPerSecond(video.samples, duration) };
    }
    // packets of the output's video stream are its frames: counted while probing, without decoding it again
    const result = await ffmpeg.probe(out, { countPackets: true }).catch(() => null);
    const stream = result?.streams.find((s) => s.codec_type === 'video');
    if (!result || !stream?.width || !stream.height) return null;
    const duration = roundMs(durationOf(result));
    return { width: stream.width, height: stream.height, duration, fps: framesPerSecond(Number(stream.nb_read_packets ?? 0), duration) };
  }
}

/** An animation's frame rate as result_data gives it: whole frames per second, 0 for a still. */
function framesPerSecond(frames: number, duration: number): number {
  return duration > 0 ? Math.round(frames / duration) : 0;
}

/** The recipe for the requested preview, its times checked against the source (a time past the end fails the job). */
function previewRecipe(p: PreviewParams, source: { probe: ProbeResult; video: ProbeStream; duration: number; remote: boolean }, input: InputOf, out: string, tilesDir: string): PreviewRecipe | MosaicTileRuns {
  const { duration } = source;
  const at = (v: string | null, fallback: number) => (v === null ? fallback : (parseTimeString(v) ?? fallback));
  const window = (defaultLength: number) => {
    const start = at(p.start, 0);
    if (start >= duration) pastEnd('start', start, duration);
    return { start, length: Math.min(p.duration ?? defaultLength, duration - start) };
  };
  switch (p.preview_type) {
    case 'gif':
      return gifRecipe(input, { ...window(5), fps: p.fps ?? 10, width: p.width }, out);
    case 'thumbnail': {
      const t = at(p.timestamp, duration * 0.25);
      if (t >= duration) pastEnd('timestamp', t, duration);
      return thumbnailRecipe(input, { at: t, width: p.width }, out);
    }
    case 'mosaic': {
      const columns = p.columns ?? PREVIEW_LIMITS.mosaic.columns.default;
      const rows = p.rows ?? PREVIEW_LIMITS.mosaic.rows.default;
      const times = mosaicTimes(source.video, duration, columns * rows);
      const readOnce = source.remote && mosaicReadsOnce(source.video, times, duration, Number(source.probe.format?.size) || undefined);
      return readOnce ? mosaicOnePassRecipe(input, { times, columns, rows, width: p.width }, out) : mosaicTileRuns(input, { times, columns, rows, width: p.width }, tilesDir);
    }
    case 'clip':
      return clipRecipe(input, { ...window(10), width: p.width, hasAudio: source.probe.streams.some((s) => s.codec_type === 'audio') }, out);
    case 'storyboard':
      throw new Error('a storyboard has its own step');
  }
}

/** The preview's own steps, as its worker builds them. */
export const previewSteps = ({ ffmpeg, storage, egress, config }: StepDeps) => createPreviewActivities({ ffmpeg, storage, egress, limits: config });
