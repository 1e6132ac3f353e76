import { str, type JobOutputView, type OutputContext } from '../output-view';

/** The three hashes as hex. */
export function showHashes({ result }: OutputContext): JobOutputView {
  return { kind: 'figures', figures: ['average_hash', 'perceptual_hash', 'difference_hash'].map((k): [string, string] => [k, str(result[k]) ?? '']), code: true };
}
