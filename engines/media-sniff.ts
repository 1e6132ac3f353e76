// What a file is, from its first bytes: to name it when it is not audio or video ("a PNG image")
// rather than say only "not media".

const SIGNATURES: [RegExp | ((b: Buffer) => boolean), string][] = [
  [(b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'a PNG image'],
  [(b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff, 'a JPEG image'],
  [(b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP', 'a WebP image'],
  [(b) => b.subarray(0, 4).toString('latin1') === '%PDF', 'a PDF document'],
  [(b) => b.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04])), 'a ZIP archive (or an Office document)'],
  [(b) => b[0] === 0x1f && b[1] === 0x8b, 'a gzip archive'],
  [(b) => b.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46])), 'an executable program'],
  [/^\s*#EXTM3U/, 'an HLS playlist (give its URL instead)'],
  [/^\s*<\?xml[^>]*>\s*<MPD/i, 'a DASH manifest (give its URL instead)'],
  [/^\s*(<!doctype html|<html)/i, 'an HTML page'],
  [/^\s*[[{]/, 'JSON or other text'],
];

/** A phrase naming what `head` (a file's first bytes) is, for a file that is not audio or video. */
export function describeNonMedia(head: Buffer): string {
  if (head.length === 0) return 'an empty file';
  for (const [test, name] of SIGNATURES) {
    if (typeof test === 'function' ? test(head) : test.test(head.toString('latin1'))) return name;
  }
  const text = head.every((c) => c === 0x09 || c === 0x0a || c === 0x0d || (c >= 0x20 && c !== 0x7f));
  return text ? 'plain text' : 'data in no audio or video format this service reads';
}

// ffprobe's format names → the type an upload is served and reported as
const TYPES: [RegExp, string, string][] = [
  [/^mov,mp4/, 'video/mp4', 'audio/mp4'],
  [/^matroska,webm/, 'video/webm', 'audio/webm'],
  [/^mp3$/, 'audio/mpeg', 'audio/mpeg'],
  [/^wav$/, 'audio/wav', 'audio/wav'],
  [/^ogg$/, 'video/ogg', 'audio/ogg'],
  [/^flac$/, 'audio/flac', 'audio/flac'],
  [/^aac$/, 'audio/aac', 'audio/aac'],
  [/^mpegts$/, 'video/mp2t', 'video/mp2t'],
  [/^avi$/, 'video/x-msvideo', 'video/x-msvideo'],
  [/^flv$/, 'video/x-flv', 'video/x-flv'],
  [/^gif$/, 'image/gif', 'image/gif'],
];

/** The content type of a media file from ffprobe's format name and whether it has a picture. */
export function mediaContentType(formatName: string, hasVideo: boolean): string {
  const hit = TYPES.find(([re]) => re.test(formatName));
  if (hit) return hasVideo ? hit[1] : hit[2];
  return 'application/octet-stream';
}

/** A file extension for media of this type (an upload is stored without one; tools name outputs after it). */
export function extensionOf(contentType: string): string {
  const known: Record<string, string> = {
    'video/mp4': 'mp4', 'audio/mp4': 'm4a', 'video/webm': 'webm', 'audio/webm': 'webm', 'audio/mpeg': 'mp3', 'audio/wav': 'wav',
    'video/ogg': 'ogv', 'audio/ogg': 'ogg', 'audio/flac': 'flac', 'audio/aac': 'aac', 'video/mp2t': 'ts', 'video/x-msvideo': 'avi',
    'video/x-flv': 'flv', 'image/gif': 'gif',
  };
  return known[contentType] ?? 'media';
}

/** Still-image demuxers: ffprobe reads a picture as one video frame, which is no video. */
export const STILL_IMAGE_FORMATS = /^(image2|png_pipe|jpeg_pipe|webp_pipe|bmp_pipe|tiff_pipe)$/;
