// What a job's error_message or an API detail may say: the source's problem, never this server's
// file paths. Pure, so workflows can apply it as the last step before a message is stored.

// An absolute path (or a file: URL): a slash not inside an http(s) URL, then at least two segments.
const LOCAL_PATH = /(?:\bfile:\/*|(?<![\w:/.~-])\/)(?:[^\s/'"()<>]+\/)+[^\s'"()<>,;:]*/g;

/** The text with every local path replaced by "a local file". */
export function withoutInternals(text: string): string {
  return text.replace(LOCAL_PATH, 'a local file');
}
