// The subtitle tracks a download carries (media-speech queue): the platform's own, read from the files
// yt-dlp fetched, and speech recognised once (recognition.ts) and translated into every other language
// asked for, as the translate operation does. Each track is written as SubRip, whole: the download's
// edit cuts them to its clip.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { parseSubtitles, toSrt, type Cue } from '../../engines/speech/subtitles';
import { planSpeechTranslation, targetsFromAnySpeech } from '../../engines/translate/speech-plan';
import { translateRoute, type TranslationEngine } from '../../engines/translate/translation-engine';
import type { Storage } from '../../engines/storage';
import { JobFailure } from '../../lib/job-failure';
import { alignByTime } from './alignment';
import { alive } from '../step/heartbeat';
import { noTranslationPath, readRecognition, type Recognition } from './recognition';

/** Where a track came from: the platform's own, recognised speech, or speech translated. */
export type TrackSource = 'platform' | 'speech' | 'translation';

/** One subtitle track of a download: its language, where it came from, and its SubRip file (relative to the job's work folder). */
export interface SubtitleTrack {
  language: string;
  source: TrackSource;
  file: string;
}

export interface SubtitleTracksInput {
  jobId: string;
  /** The languages, in the order of the tracks. */
  languages: string[];
  /** The platform's files, for the languages it has. */
  platform: { language: string; file: string }[];
  /** Speech recognised from the source, for the others. */
  recognition: Recognition | null;
}

export function createSubtitleTrackActivities(deps: { translator: TranslationEngine; storage: Storage }) {
  const { translator, storage } = deps;

  async function write(jobId: string, language: string, cues: Cue[]): Promise<string> {
    const relative = path.join('subtitles', `${language}.srt`);
    const file = path.join(storage.workDirOf(jobId), relative);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, toSrt(cues));
    await storage.shareWorkFile(jobId, relative);
    return relative;
  }

  return {
    /** One SubRip file per language asked for: the platform's track where given, else the recognised speech in it or translated into it. */
    async subtitleTracks(input: SubtitleTracksInput): Promise<SubtitleTrack[]> {
      const signal = Context.current().cancellationSignal;
      const result = input.recognition ? await readRecognition(storage, input.jobId, input.recognition) : null;
      const segments = result?.passes.transcribe?.segments ?? [];
      const tracks: SubtitleTrack[] = [];
      for (const language of input.languages) {
        const given = input.platform.find((p) => p.language === language);
        if (given) {
          const parsed = parseSubtitles(await fs.readFile(await storage.workFile(input.jobId, given.file), 'utf8'));
          if (!parsed) throw JobFailure.user('unavailable', `The platform's "${language}" subtitles could not be read (not SRT or WebVTT)`);
          tracks.push({ language, source: 'platform', file: await write(input.jobId, language, parsed.cues) });
          continue;
        }
        if (!result) throw new Error(`no recognition for subtitles in ${language}`);
        const spoken = result.language;
        const plan = planSpeechTranslation(translator.pairs(), spoken, language);
        if (!plan) throw noTranslationPath(spoken, language, targetsFromAnySpeech(translator.pairs()));
        const originals = segments.map((s) => s.text);
        let texts: string[];
        if (plan.kind === 'same') texts = originals;
        else if (plan.kind === 'text') texts = await alive(() => translateRoute(translator, originals, plan.route, signal));
        else {
          const english = result.passes.translate?.segments;
          if (!english) throw JobFailure.user('rejected', `Subtitles in "${language}" from ${spoken} speech need English as a step; ask for "en" as well, or a language the text translation reaches from ${spoken}`);
          const aligned = alignByTime(segments, english);
          texts = plan.kind === 'whisper' ? aligned : await alive(() => translateRoute(translator, aligned, plan.route, signal));
        }
        const cues = segments.map((s, i) => ({ start: s.start, end: s.end, text: texts[i] ?? '' }));
        tracks.push({ language, source: plan.kind === 'same' ? 'speech' : 'translation', file: await write(input.jobId, language, cues) });
      }
      return tracks;
    },
  };
}

export type SubtitleTrackActivities = ReturnType<typeof createSubtitleTrackActivities>;
