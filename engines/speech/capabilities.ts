// What this server has installed, as the operation registry's checks and GET /v1/languages see it.
import { WHISPER_LANGUAGES } from './languages';
import { ModelSelectionError } from './model-registry';
import type { SpeechServices } from './services';
import type { ServerCapabilities } from '../../lib/server-capabilities';
import { planSpeechTranslation, targetReachable, targetsFromAnySpeech } from '../translate/speech-plan';
import { planRoute, reachablePairs } from '../translate/translation-engine';

const WHISPER = new Set(WHISPER_LANGUAGES);

export function serverCapabilities(speech: SpeechServices): ServerCapabilities {
  const { registry: models, translator } = speech;
  return {
    speech: {
      spokenLanguageProblem: (code) => (WHISPER.has(code) ? null : `"${code}" is not a language Whisper recognises; GET /v1/languages lists them`),
      modelProblem: (size, language) => {
        try {
          models.select(size, language);
          return null;
        } catch (err) {
          if (err instanceof ModelSelectionError) return err.message;
          throw err;
        }
      },
      translationProblem: (source, target) => {
        const pairs = translator.pairs();
        const ok = source ? planSpeechTranslation(pairs, source, target) !== null : targetReachable(pairs, target);
        if (ok) return null;
        const from = source ? ` from "${source}"` : '';
        const into = [...new Set(pairs.map((q) => q.to))].sort();
        return (
          `No translation path${from} to "${target}" on this server. Any speech can be translated into: ${targetsFromAnySpeech(pairs).join(', ')}; ` +
          `text translation reaches: ${into.join(', ') || 'none'} (GET /v1/languages lists every pair)`
        );
      },
      textTranslationProblem: (source, target) => {
        const pairs = translator.pairs();
        if (source === target || planRoute(pairs, source, target)) return null;
        const from = reachablePairs(pairs).filter((q) => q.from === source).map((q) => q.to);
        return `No text translation from "${source}" to "${target}" on this server; from "${source}" it reaches: ${from.sort().join(', ') || 'nothing'} (GET /v1/languages lists every pair)`;
      },
    },
  };
}

/** The body of GET /v1/languages. */
export function languagesOverview(speech: SpeechServices) {
  const { registry: models, translator } = speech;
  const pairs = translator.pairs();
  const reachable = reachablePairs(pairs).map((q) => ({ ...q, route: planRoute(pairs, q.from, q.to)! }));
  return {
    transcription: {
      languages: WHISPER_LANGUAGES,
      model_sizes: models.servedSizes() as string[],
      models: models.list().map((m) => ({ name: m.name, size: m.size as string, english_only: m.englishOnly })),
    },
    translation: {
      engine: translator.name,
      speech_to_english: true,
      direct_pairs: pairs,
      pairs: reachable,
      pair_count: reachable.length,
      targets_from_any_speech: targetsFromAnySpeech(pairs),
    },
  };
}
