import { EXPIRED, num, parseCues, str, type JobOutputView, type OutputContext } from '../output-view';

/** The preview itself: a clip plays, a GIF, thumbnail or mosaic is an image, a storyboard its sprite with each tile's time. */
export async function showPreview({ result, downloadUrl, readText, fileUrl }: OutputContext): Promise<JobOutputView> {
  if (!downloadUrl) return EXPIRED;
  const size = { width: num(result.width), height: num(result.height) };
  if (result.preview_type === 'clip') return { kind: 'video', url: downloadUrl, ...size };
  if (result.preview_type === 'storyboard') return storyboardView(str(result.sprite), fileUrl, readText);
  return { kind: 'image', url: downloadUrl, ...size, animated: result.preview_type === 'gif' };
}

/** The sprite, and each tile's place in it and time, read from the storyboard's WebVTT. */
async function storyboardView(sprite: string | null, fileUrl: OutputContext['fileUrl'], readText: OutputContext['readText']): Promise<JobOutputView> {
  const spriteUrl = sprite ? fileUrl(sprite) : null;
  const vtt = await readText();
  if (!spriteUrl || vtt === null) return EXPIRED;
  const tiles = parseCues(vtt).flatMap((cue) => {
    const m = /#xywh=(\d+),(\d+),(\d+),(\d+)$/.exec(cue.text);
    return m && cue.start !== null && cue.end !== null ? [{ start: cue.start, end: cue.end, x: Number(m[1]), y: Number(m[2]), w: Number(m[3]), h: Number(m[4]) }] : [];
  });
  const width = Math.max(0, ...tiles.map((t) => t.x + t.w));
  const height = Math.max(0, ...tiles.map((t) => t.y + t.h));
  return { kind: 'storyboard', spriteUrl, width, height, tiles };
}
