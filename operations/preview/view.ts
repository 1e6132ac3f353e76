import { EXPIRED, num, type JobOutputView, type OutputContext } from '../output-view';

/** The preview itself: a clip plays, a GIF, thumbnail or mosaic is an image. */
export function showPreview({ result, downloadUrl }: OutputContext): JobOutputView {
  if (!downloadUrl) return EXPIRED;
  const size = { width: num(result.width), height: num(result.height) };
  if (result.preview_type === 'clip') return { kind: 'video', url: downloadUrl, ...size };
  return { kind: 'image', url: downloadUrl, ...size, animated: result.preview_type === 'gif' };
}
