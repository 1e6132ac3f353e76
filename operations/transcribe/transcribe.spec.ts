import assert from 'node:assert/strict';
import { SPEECH_SAMPLE_RATE, speechAudioRecipe, speechChannelRecipe } from '../../engines/ffmpeg/recipes/audio';

describe('transcribe: the speech audio recipe', () => {
  it("decodes the first audio track to a 16 kHz mono 16-bit WAV, faster-whisper's own rate", () => {
    assert.equal(SPEECH_SAMPLE_RATE, 16_000);
    assert.deepEqual(speechAudioRecipe('/work/job/source.mkv', '/work/job/speech/audio.wav'), [
      '-i', '/work/job/source.mkv', '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', '-y', '/work/job/speech/audio.wav',
    ]);
  });

  it('one channel of the first audio track (multichannel: a speaker per channel) at the same rate', () => {
    assert.deepEqual(speechChannelRecipe('/work/job/source.wav', 1, '/work/job/speech/channel-1.wav'), [
      '-i', '/work/job/source.wav', '-map', '0:a:0', '-vn', '-af', 'pan=mono|c0=c1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', '-y', '/work/job/speech/channel-1.wav',
    ]);
  });
});
