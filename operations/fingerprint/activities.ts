import fs from 'node:fs/promises';
import path from 'node:path';
import { stillFrameRecipe } from '../../engines/ffmpeg/recipes/frame';
import { imageHashes } from '../../engines/image-hash';
import type { Storage } from '../../engines/storage';
import type { JobOutput } from '../../lib/job-reports';
import type { HashSize } from './spec';
import { formatTimestamp } from '../../lib/time';
import { pastEnd, videoOf, withSource, type SourceReadDeps, type SourceRef } from '../../activities/source/video-source';
import type { StepDeps } from '../step-deps';

export interface FingerprintDeps extends SourceReadDeps {
  storage: Storage;
}

export interface FingerprintFrameInput extends SourceRef {
  jobId: string;
  title: string;
  /** Seconds; null for 25% of the duration. */
  timestamp: number | null;
  hashSize: HashSize;
  progressRange: [number, number];
}

/** Perceptual fingerprints of one frame (ffmpeg for the frame, sharp and image-hash for the hashes), on `media-process`. */
export function createFingerprintActivities(deps: FingerprintDeps) {
  const { storage } = deps;

  return {
    /** average, perceptual and difference hash of one frame (imagehash's definitions and hex layout). */
    async fingerprintFrame(input: FingerprintFrameInput): Promise<JobOutput> {
      const frame = path.join(storage.workDirOf(input.jobId), 'frame.png');
      const { t, png } = await withSource(deps, storage, input.jobId, input, async (src) => {
        const { duration } = videoOf(await src.probe());
        const t = input.timestamp ?? duration * 0.25;
        if (t >= duration) pastEnd('timestamp', t, duration);
        await fs.rm(frame, { force: true });
        await fs.mkdir(path.dirname(frame), { recursive: true });
        await src.run(stillFrameRecipe(src.input, { at: t }, frame), 1, [input.progressRange[0], (input.progressRange[0] + input.progressRange[1]) / 2]);
        const png = await fs.readFile(frame).catch(() => {
          throw src.unreadable('No frame could be taken from the source at that time');
        });
        return { t, png };
      });
      const hashes = await imageHashes(png, input.hashSize);
      const resultData = { ...hashes, hash_size: input.hashSize, frame_timestamp: formatTimestamp(t), title: input.title };
      const relative = storage.outputRelative(input.jobId, 'fingerprint.json');
      const out = storage.outputPath(relative);
      await fs.mkdir(path.dirname(out), { recursive: true });
      await fs.writeFile(out, JSON.stringify(resultData, null, 2) + '\n');
      await storage.commitOutput(relative);
      return { outputFile: relative, resultData };
    },
  };
}

/** The fingerprint's own steps, as its worker builds them. */
export const fingerprintSteps = ({ ffmpeg, storage, egress, config }: StepDeps) => createFingerprintActivities({ ffmpeg, storage, egress, limits: config });
