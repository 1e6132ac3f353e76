// What a download request means (audio or video, processing order, whether a clip fits) and the
// yt-dlp format selection that follows from it.
import assert from 'node:assert/strict';
import { ytdlpSelection } from '../../engines/ytdlp/format-selection';
import { clipProblem, isAudioOutput, processingSteps } from '../../lib/download-plan';

describe('a download request', () => {
  it('is audio only for quality audio or an audio format', () => {
    assert.equal(isAudioOutput('audio', null), true);
    assert.equal(isAudioOutput('best', 'mp3'), true);
    assert.equal(isAudioOutput('720p', 'wav'), true);
    assert.equal(isAudioOutput('best', 'mp4'), false);
  });

  it('applies processing as denoise, trim_silence, normalize whatever the order asked, once each', () => {
    assert.deepEqual(processingSteps(['normalize', 'denoise', 'normalize', 'trim_silence']), ['denoise', 'trim_silence', 'normalize']);
    assert.deepEqual(processingSteps(null), []);
  });

  it('clip problems: a start at or past the end, an end past it (a frame of slack); null when it fits', () => {
    assert.equal(clipProblem(4, null, 4), 'clip_start (4 s) is past the end of the source, which is 4 s long');
    assert.equal(clipProblem(null, 9, 4.0123), 'clip_end (9 s) is past the end of the source, which is 4.012 s long');
    assert.equal(clipProblem(null, 4.04, 4), null);
    assert.equal(clipProblem(1, 3, 4), null);
    assert.equal(clipProblem(null, null, 0.5), null);
  });
});

describe("yt-dlp's format selection", () => {
  it('takes the best audio for audio outputs, preferring mp3 for mp3', () => {
    assert.deepEqual(ytdlpSelection('audio', null), { format: 'ba/b', sort: undefined });
    assert.deepEqual(ytdlpSelection('best', 'mp3'), { format: 'ba/b', sort: 'acodec:mp3' });
  });

  it('caps the height, falling back to the smallest rendition, and prefers the target container', () => {
    assert.deepEqual(ytdlpSelection('720p', 'mp4'), { format: 'bv*[height<=720]+ba/b[height<=720]/wv*+ba/w', sort: 'ext:mp4:m4a' });
    assert.deepEqual(ytdlpSelection('480p', 'webm'), { format: 'bv*[height<=480]+ba/b[height<=480]/wv*+ba/w', sort: 'ext:webm' });
    assert.deepEqual(ytdlpSelection('best', null), { format: 'bv*+ba/b', sort: undefined });
  });
});
