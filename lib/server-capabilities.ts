// What this server has installed, as the operations' request checks see it: an interface, so the
// workflow code that types the operations names no engine (engines/speech/capabilities.ts builds it).

/** What the server has installed, for checks a static schema cannot make (models, translation pairs). */
export interface ServerCapabilities {
  speech: {
    /** Why `code` is not a language speech recognition knows (a phrase after the field name), or null. */
    spokenLanguageProblem(code: string): string | null;
    /** Why no installed model serves this size (and spoken language, when known), as a sentence, or null. */
    modelProblem(size: 'tiny' | 'base' | 'small' | 'medium', language: string | null): string | null;
    /** Why speech cannot be translated from `source` (null: detected) into `target`, as a sentence, or null. */
    translationProblem(source: string | null, target: string): string | null;
    /** Why text (a subtitle file) cannot be translated from `source` into `target` by the installed pairs, as a sentence, or null. */
    textTranslationProblem(source: string, target: string): string | null;
  };
}
