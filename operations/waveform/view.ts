import { EXPIRED, num, str, type JobOutputView, type OutputContext } from '../output-view';

/** A PNG waveform as the image; JSON peak data as its key figures (the file itself is the download). */
export function showWaveform({ result, downloadUrl }: OutputContext): JobOutputView {
  if (result.format === 'png') return downloadUrl ? { kind: 'image', url: downloadUrl, width: num(result.width), height: num(result.height), animated: false } : EXPIRED;
  const figure = (k: string): [string, string] => [k, String(num(result[k]) ?? str(result[k]) ?? '')];
  return { kind: 'figures', figures: [figure('points'), figure('duration'), figure('sample_rate'), figure('samples_per_pixel')], code: false };
}
