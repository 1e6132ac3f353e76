// Speaker labels put on recognised speech, without tools: words take the turn that holds them, a
// segment splits where its speaker changes, letters follow the order of first speech; SRT and
// WebVTT carry the speaker.
import assert from 'node:assert/strict';
import { labelSpeakers, mergeChannels, speakerLetter } from '../../activities/speech/speakers';
import { alignByChannel } from '../../activities/speech/alignment';
import type { WhisperResult } from '../../engines/speech/whisper.engine';
import { toSrt, toVtt } from '../../engines/speech/subtitles';
import type { SpeakerTurn, WhisperSegment } from '../../engines/speech/whisper.engine';

const word = (w: string, start: number, end: number) => ({ word: w, start, end, probability: 0.9 });
const decoding = { id: 0, seek: 0, tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 };

describe('speaker labels', () => {
  it('letters in order of first speech, whatever the runner numbered; a segment is split where its speaker changes', () => {
    const segments: WhisperSegment[] = [
      { start: 0, end: 4.2, text: 'Hello there. Hi, how are you?', words: [word('Hello', 0.1, 0.5), word('there.', 0.5, 1.0), word('Hi,', 2.0, 2.3), word('how', 2.4, 2.6), word('are', 2.6, 2.8), word('you?', 2.8, 3.2)], decoding },
      { start: 4.2, end: 6, text: 'Fine.', words: [word('Fine.', 4.5, 5.0)] },
    ];
    // the runner's speaker 1 spoke first
    const turns: SpeakerTurn[] = [[0, 1.2, 1], [1.9, 3.3, 0], [4.4, 5.1, 1]];
    const { segments: out, speakers } = labelSpeakers(segments, turns);
    assert.deepEqual(out.map((s) => [s.start, s.end, s.speaker, s.text]), [[0, 1.0, 'A', 'Hello there.'], [2.0, 4.2, 'B', 'Hi, how are you?'], [4.2, 6, 'A', 'Fine.']]);
    assert.deepEqual(out[0]!.words!.map((w) => w.speaker), ['A', 'A']);
    assert.deepEqual(out[1]!.decoding, decoding, 'each piece keeps the decoding figures');
    assert.deepEqual(speakers, [{ speaker: 'A', seconds: 2.8 }, { speaker: 'B', seconds: 2.2 }]);
  });

  it('a word between turns takes the nearest; a segment without words takes the speaker holding most of it; no turns: one speaker', () => {
    const { segments } = labelSpeakers([{ start: 0, end: 3, text: 'a b', words: [word('a', 0, 0.4), word('b', 2.6, 2.9)] }, { start: 3, end: 9, text: 'no words' }], [[0, 0.3, 0], [2.7, 3, 1], [3, 4, 0], [4, 9, 1]]);
    assert.deepEqual(segments.map((s) => s.speaker), ['A', 'B', 'B']);
    assert.equal(segments[2]!.words, undefined);
    assert.deepEqual(labelSpeakers([{ start: 0, end: 1, text: 'x', words: [word('x', 0, 1)] }], []).speakers.map((s) => s.speaker), ['A']);
  });

  it('a language without spaces joins a split segment\'s words as they are', () => {
    const { segments } = labelSpeakers([{ start: 0, end: 2, text: '你好世界', words: [word('你好', 0, 0.5), word('世界', 1.5, 2)] }], [[0, 1, 0], [1, 2, 1]], '');
    assert.deepEqual(segments.map((s) => s.text), ['你好', '世界']);
  });

  it('one speaker per channel: segments and words take the channel\'s letter, merged in time order; the language of the channel with most speech', () => {
    const channel = (language: string, segments: WhisperSegment[], seconds: number): WhisperResult => ({ language, language_probability: 0.9, language_candidates: [], duration: 10, duration_after_vad: seconds, passes: { transcribe: { segments } }, timings: { transcribe_s: 1 } });
    const merged = mergeChannels([
      channel('en', [{ start: 0, end: 2, text: 'Hello', words: [word('Hello', 0, 1)] }, { start: 5, end: 9, text: 'Goodbye' }], 6),
      channel('es', [{ start: 2.5, end: 3, text: 'Hola' }], 0.5),
    ]);
    assert.deepEqual(merged.passes.transcribe!.segments.map((s) => [s.start, s.speaker, s.channel, s.text]), [[0, 'A', 0, 'Hello'], [2.5, 'B', 1, 'Hola'], [5, 'A', 0, 'Goodbye']]);
    assert.equal((merged.passes.transcribe!.segments[0]!.words![0] as { speaker?: string }).speaker, 'A');
    assert.deepEqual([merged.language, merged.duration_after_vad, merged.timings.transcribe_s], ['en', 6.5, 2]);
  });

  it("a channel's English pass is aligned to that channel's segments only, even where the channels speak at once", () => {
    const originals = [{ start: 0, end: 4, channel: 0 }, { start: 1, end: 3, channel: 1 }];
    const english = [{ start: 1, end: 3, text: 'left', channel: 0 }, { start: 1, end: 3, text: 'right', channel: 1 }];
    assert.deepEqual(alignByChannel(originals, english), ['left', 'right']);
  });

  it('known speakers the runner matched are labelled with their names; the others take letters from A, in order of first speech among them', () => {
    const segs: WhisperSegment[] = [0, 1, 2].map((i) => ({ start: i * 2, end: i * 2 + 1, text: `s${i}`, words: [word(`s${i}`, i * 2, i * 2 + 1)] }));
    const { speakers } = labelSpeakers(segs, [[0, 1, 0], [2, 3, 1], [4, 5, 2]], ' ', { '1': 'Ann' });
    assert.deepEqual(speakers.map((s) => s.speaker), ['A', 'Ann', 'B']);
  });

  it('A … Z, then S27', () => {
    assert.deepEqual([0, 1, 25, 26].map(speakerLetter), ['A', 'B', 'Z', 'S27']);
  });

  it('SRT cues start with "A: ", WebVTT cues are voice spans; cues without a speaker are unchanged', () => {
    const cues = [{ start: 0, end: 1, text: 'Hello', speaker: 'A' }, { start: 1, end: 2, text: 'Hi', speaker: 'B' }, { start: 2, end: 3, text: 'no one' }];
    assert.equal(toSrt(cues), '1\n00:00:00,000 --> 00:00:01,000\nA: Hello\n\n2\n00:00:01,000 --> 00:00:02,000\nB: Hi\n\n3\n00:00:02,000 --> 00:00:03,000\nno one\n');
    assert.equal(toVtt(cues), 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n<v A>Hello</v>\n\n00:00:01.000 --> 00:00:02.000\n<v B>Hi</v>\n\n00:00:02.000 --> 00:00:03.000\nno one\n');
    assert.equal(toVtt([{ start: 0, end: 1, text: 'x', speaker: 'Ann > Bob' }]).split('\n')[3], '<v Ann   Bob>x</v>');
  });
});
