// Translate's own steps (media-speech queue): the recognised segments translated (Whisper's English
// pass and/or Apertium), aligned one to one, and the file, from the shared recognition
// (activities/speech/recognition.ts).
import { Context } from '@temporalio/activity';
import { alive, progressReporter } from '../../activities/step/heartbeat';
import { createRecognitionActivities, joinText, noTranslationPath, readRecognition, recognisedSegments, speechResultFields, writeSpeechFiles, type Recognition, type SpeechInput } from '../../activities/speech/recognition';
import { planSpeechTranslation, targetsFromAnySpeech } from '../../engines/translate/speech-plan';
import { planRoute, translateRoute } from '../../engines/translate/translation-engine';
import { parseSubtitles } from '../../engines/speech/subtitles';
import { JobFailure } from '../../lib/job-failure';
import fs from 'node:fs/promises';
import type { JobOutput } from '../../lib/job-reports';
import { speechOf, type StepDeps } from '../step-deps';
import type { TranslateParams } from './spec';
import { alignByChannel } from '../../activities/speech/alignment';

export function translateSteps(deps: StepDeps) {
  const { storage } = deps;
  const { translator } = speechOf(deps);

  /** Each text's lines translated one by one (in one batch), so a cue keeps its line breaks. */
  async function translateLines(texts: string[], route: string[], signal: AbortSignal): Promise<string[]> {
    const lines = texts.map((t) => t.split('\n'));
    const flat = await translateRoute(translator, lines.flat(), route, signal);
    let at = 0;
    return lines.map((ls) => ls.map(() => flat[at++] ?? '').join('\n'));
  }
  const recognition = createRecognitionActivities({ ...speechOf(deps), ffmpeg: deps.ffmpeg, storage, config: deps.config });

  const steps = {
    /** Text translation of the recognised segments (Whisper's English and/or Apertium), aligned one to one, and the file. */
    async translateTranscript(input: { jobId: string; params: TranslateParams; recognition: Recognition; progressRange: [number, number] }): Promise<JobOutput> {
      const started = performance.now();
      const p = input.params;
      const target = p.target_language;
      const pairs = translator.pairs();
      const result = await readRecognition(storage, input.jobId, input.recognition);
      const source = result.language;
      const plan = planSpeechTranslation(pairs, p.source_language ?? source, target);
      if (!plan) throw noTranslationPath(source, target, targetsFromAnySpeech(pairs));
      // with speaker labels, a segment in which the speaker changes is translated in pieces, each keeping its speaker
      const { segments, speakers } = recognisedSegments(result, p);
      const originals = segments.map((s) => s.text);
      const signal = Context.current().cancellationSignal;
      const report = progressReporter(input.progressRange);
      let texts: string[];
      let engine: string;
      let route: string[];
      if (plan.kind === 'same') {
        texts = originals;
        engine = 'none';
        route = [source];
      } else if (plan.kind === 'text') {
        texts = await alive(() => translateRoute(translator, originals, plan.route, signal));
        engine = translator.name;
        route = plan.route;
      } else {
        const english = alignByChannel(segments, result.passes.translate?.segments ?? []);
        texts = plan.kind === 'whisper' ? english : await alive(() => translateRoute(translator, english, plan.route, signal));
        engine = plan.kind === 'whisper' ? 'whisper' : `whisper+${translator.name}`;
        route = plan.kind === 'whisper' ? [source, 'en'] : [source, ...plan.route];
      }
      report(1);
      const aligned = segments.map((s, i) => ({ start: s.start, end: s.end, ...(s.speaker ? { speaker: s.speaker } : {}), ...(s.channel !== undefined ? { channel: s.channel } : {}), original: s.text, text: texts[i] ?? '' }));
      const originalText = joinText(originals);
      const translatedText = joinText(texts);
      const json = { source_language: source, target_language: target, original_text: originalText, translated_text: translatedText, ...(speakers ? { speakers } : {}), segments: aligned };
      const outputFile = await writeSpeechFiles(storage, input.jobId, { format: p.output_format, json, cues: aligned, segments });
      return {
        outputFile,
        resultData: {
          source_language: source,
          target_language: target,
          original_text: originalText,
          translated_text: translatedText,
          translation_engine: engine,
          translation_route: route,
          ...speechResultFields(result, input.recognition, segments.length, p.output_format, started),
          ...(speakers ? { speaker_count: speakers.length } : {}),
        },
      };
    },
  };

  return {
    ...steps,

    /** A subtitle file (SRT or WebVTT) translated cue by cue, line by line, every timing and voice kept: no speech is recognised. */
    async translateSubtitleFile(input: { jobId: string; params: TranslateParams; file: string; progressRange: [number, number] }): Promise<JobOutput> {
      const p = input.params;
      const source = p.source_language ?? '';
      const bytes = await fs.readFile(await storage.workFile(input.jobId, input.file));
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw JobFailure.user('rejected', 'The subtitle file is not UTF-8 text; save it as UTF-8 and try again');
      }
      const parsed = parseSubtitles(text);
      if (!parsed) throw JobFailure.user('rejected', 'The source is not a subtitle file: no SRT or WebVTT cue (a timing line such as 00:00:01,000 --> 00:00:02,500 and its text) was found');
      const route = source === p.target_language ? [source] : planRoute(translator.pairs(), source, p.target_language);
      if (!route) throw JobFailure.user('rejected', `No text translation from "${source}" to "${p.target_language}" on this server (GET /v1/languages lists every pair)`);
      const { cues } = parsed;
      const texts = await alive(() => translateLines(cues.map((c) => c.text), route, Context.current().cancellationSignal));
      progressReporter(input.progressRange)(1);
      const aligned = cues.map((c, i) => ({ start: c.start, end: c.end, ...(c.speaker ? { speaker: c.speaker } : {}), original: c.text, text: texts[i] ?? '' }));
      const originalText = joinText(cues.map((c) => c.text.replace(/\n/g, ' ')));
      const translatedText = joinText(texts.map((t) => t.replace(/\n/g, ' ')));
      const json = { source_language: source, target_language: p.target_language, original_text: originalText, translated_text: translatedText, source_format: parsed.format, segments: aligned };
      const outputFile = await writeSpeechFiles(storage, input.jobId, { format: p.output_format, json, cues: aligned, segments: [] });
      return {
        outputFile,
        resultData: {
          source_language: source,
          target_language: p.target_language,
          original_text: originalText,
          translated_text: translatedText,
          segment_count: aligned.length,
          output_format: p.output_format,
          source_format: parsed.format,
          translation_engine: route.length > 1 ? translator.name : 'none',
          translation_route: route,
        },
      };
    },

    /** Speech → text in another language in one step; workflows started before speech-steps-v1 still call it. */
    async translate(input: SpeechInput<TranslateParams>): Promise<JobOutput> {
      const [from, to] = input.progressRange;
      const mid = from + (to - from) * 0.93;
      const done = await recognition.recognizeSpeech({ jobId: input.jobId, sourceFile: input.sourceFile, request: { kind: 'translate', params: input.params }, progressRange: [from, mid] });
      return steps.translateTranscript({ jobId: input.jobId, params: input.params, recognition: done, progressRange: [mid, to] });
    },
  };
}
