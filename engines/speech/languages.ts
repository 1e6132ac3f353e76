import langs from 'langs';
/** Languages Whisper transcribes (faster-whisper 1.2.1's tokenizer codes; `yue` is large-v3 only). */
export const WHISPER_LANGUAGES = (
  'af am ar as az ba be bg bn bo br bs ca cs cy da de el en es et eu fa fi fo fr gl gu ha haw he hi hr ht hu hy id is it ja jw ka kk km kn ' +
  'ko la lb ln lo lt lv mg mi mk ml mn mr ms mt my ne nl nn no oc pa pl ps pt ro ru sa sd si sk sl sn so sq sr su sv sw ta te tg th tk tl tr ' +
  'tt uk ur uz vi yi yo zh yue'
).split(' ');

/** A language's ISO 639-2/B code, as Matroska and MP4 tag a track (Whisper's own three-letter codes kept, `jw` as Javanese). */
export function iso639_2(code: string): string {
  if (code.length === 3) return code;
  const entry = langs.where('1', code === 'jw' ? 'jv' : code);
  return entry?.['2B'] ?? 'und';
}

/** A language's English name, for a track's title ("German"); the code itself when it has none. */
export function languageName(code: string): string {
  const entry = code.length === 3 ? langs.where('3', code) : langs.where('1', code === 'jw' ? 'jv' : code);
  return entry?.name ?? code;
}
