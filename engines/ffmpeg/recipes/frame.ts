// The ffmpeg recipe of one still frame as a lossless RGB PNG, what the image hashes are computed on.
// Pure: how to open the source and the time in, the argument list out.
import type { InputOf } from './preview';
import { DISPLAY_SQUARE } from '../display';

/** The first frame at or after `at` seconds (a seek before `-i`, so a URL is read from there), as a player shows it. */
export function stillFrameRecipe(input: InputOf, p: { at: number }, out: string): string[] {
  return [...input(['-ss', p.at.toFixed(3)]), '-map', '0:v:0', '-frames:v', '1', '-vf', DISPLAY_SQUARE, '-update', '1', '-pix_fmt', 'rgb24', '-f', 'image2', '-c:v', 'png', '-y', out];
}
