import assert from 'node:assert/strict';
import { SPEECH_SAMPLE_RATE, speechAudioRecipe } from '../../engines/ffmpeg/recipes/audio';

describe('transcribe: the speech audio recipe', () => {
  it("decodes the first audio track to a 16 kHz mono 16-bit WAV, faster-whisper's own rate", () => {
    assert.equal(SPEECH_SAMPLE_RATE, 16_000);
    assert.deepEqual(speechAudioRecipe('/work/job/source.mkv', '/work/job/speech/audio.wav'), [
      '-i', '/work/job/source.mkv', '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav', '-y', '/work/job/speech/audio.wav',
    ]);
  });
});
