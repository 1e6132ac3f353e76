import assert from 'node:assert/strict';
import { stillFrameRecipe } from '../../engines/ffmpeg/recipes/frame';

const file = (before: string[]) => [...before, '-i', '/work/job/source.mp4'];
const url = (before: string[]) => [...before, '-headers', 'Referer: https://video.example/\r\n', '-i', 'https://cdn.example/v.mp4'];

describe('fingerprint: the still frame recipe', () => {
  it('seeks before the input (a URL is read from there), then takes one RGB frame as a player shows it (square pixels) as a lossless PNG', () => {
    assert.deepEqual(stillFrameRecipe(file, { at: 3.5 }, '/work/job/frame.png'), [
      '-ss', '3.500', '-i', '/work/job/source.mp4',
      '-map', '0:v:0', '-frames:v', '1', '-vf', 'scale=max(1\\,round(iw*sar)):ih:flags=lanczos,setsar=1', '-update', '1', '-pix_fmt', 'rgb24', '-f', 'image2', '-c:v', 'png', '-y', '/work/job/frame.png',
    ]);
    const args = stillFrameRecipe(url, { at: 1 / 3 }, 'frame.png');
    assert.ok(args.indexOf('-ss') < args.indexOf('-headers') && args.indexOf('-headers') < args.indexOf('-i'), args.join(' '));
    assert.equal(args[args.indexOf('-ss') + 1], '0.333', 'milliseconds, never an exponent');
  });
});
