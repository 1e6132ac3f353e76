// Reading a remote file in place: whether its origin really serves byte ranges, and its MP4 index.
import { Context } from '@temporalio/activity';
import { probeByteRanges, readByteRange } from '../../engines/direct-media';
import type { ProbeResult } from '../../engines/ffmpeg/ffmpeg.engine';
import { findMp4Index, probeOfMp4Index } from '../../engines/ffmpeg/mp4-index';
import { asRefusal } from '../step/egress-run';
import { alive } from '../step/heartbeat';
import { INDEX_CHUNK_BYTES } from './source-facts';

/** Where a file read in place ends up after redirects, and its size. */
export interface ByteRanges {
  url: string;
  size: number;
}

/**
 * Whether ffmpeg can seek in this URL: the origin must really serve byte ranges (checked with a
 * small range request); an index at the end of the file is then no obstacle. The answer is the
 * job's: a source that passes is read in place, any other is downloaded. Null when it does not.
 */
export async function byteRangesOf(url: string, allowPrivate: boolean, headers: Record<string, string> = {}): Promise<ByteRanges | null> {
  const signal = Context.current().cancellationSignal;
  return probeByteRanges(url, { allowPrivate, headers, signal }).catch((err: unknown) => {
    throw asRefusal(err);
  });
}

/**
 * What ffprobe would say of a file read in place, from its MP4 index fetched with a range request
 * or two (no ffprobe process, no proxy run); null for anything that is not a readable MP4 index.
 */
export async function indexProbe(ranges: ByteRanges, allowPrivate: boolean, headers: Record<string, string>): Promise<ProbeResult | null> {
  const signal = Context.current().cancellationSignal;
  const read = (start: number, length: number) => readByteRange(ranges.url, start, length, { allowPrivate, headers, signal });
  const index = await alive(() => findMp4Index(read, ranges.size, { chunk: INDEX_CHUNK_BYTES, maxReads: 3 }));
  return index && probeOfMp4Index(index, ranges.size);
}
