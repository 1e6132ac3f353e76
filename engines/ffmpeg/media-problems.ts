// What ffmpeg and ffprobe say about a source that cannot be read, in words its owner can act on.
// The tools' own lines stay in the logs; a job's error_message never names a tool.

interface KnownProblem {
  pattern: RegExp;
  /** Completes "The source could not be read: …". */
  words: string;
}

// First match wins: the specific causes come before the generic "invalid data".
const KNOWN: KnownProblem[] = [
  { pattern: /moov atom not found|Cannot determine format of input stream .* after EOF|error reading header|Truncating packet|stream ends prematurely|Invalid EBML|Premature end of (file|stream)/i, words: 'the source ended before its index could be read (the file is cut short, or its index is missing)' },
  { pattern: /not on (the )?(format )?whitelist|allowed_segment_extensions|Protocol not found|Protocol '[^']*' not on whitelist/i, words: 'it is a playlist or a list of other files posing as a media file, which is not opened' },
  { pattern: /Server returned 404|HTTP error 404|Server returned 403|HTTP error 403|Server returned 410|Server returned 4\d\d|HTTP error 4\d\d/i, words: 'the origin refused to serve it (HTTP 4xx)' },
  { pattern: /matches no streams|does not contain any stream|Output file #?\d* does not contain any stream|no (video|audio) stream/i, words: 'it has no track of the kind this operation needs' },
  { pattern: /Invalid NAL unit|error while decoding|corrupt (decoded )?frame|decode_slice_header error|concealing \d+ (DC|AC|MV) errors|Invalid frame dimensions/i, words: 'its picture or sound data is damaged' },
  { pattern: /Invalid data found when processing input|could not find codec parameters|Unknown input format|unsupported codec|Decoder \(codec [^)]*\) not found/i, words: 'it is not audio or video in a format that can be read' },
];

/** libavutil's refusal of a picture over `-max_pixels` (the decoder allocates nothing for it). */
export const OVERSIZED = /Picture size (\d+)x(\d+) exceeds specified max pixel count (\d+)/;

/** The source's problem named in a tool log, or null when the log names none this service knows. */
export function mediaProblemOf(log: string): string | null {
  const big = OVERSIZED.exec(log);
  if (big) return `its picture is ${big[1]}×${big[2]} pixels, more than the limit of ${(Number(big[3]) / 1e6).toFixed(1)} megapixels`;
  for (const k of KNOWN) if (k.pattern.test(log)) return k.words;
  return null;
}

/** An ffmpeg or ffprobe run that failed: the message is for logs, `log` is the tool's stderr tail. */
export class FfmpegError extends Error {
  constructor(
    message: string,
    readonly log: string,
  ) {
    super(message);
    this.name = 'FfmpegError';
  }

  /** The source problem the log names, if any (see mediaProblemOf). */
  get problem(): string | null {
    return mediaProblemOf(this.log);
  }
}
