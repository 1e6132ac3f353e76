// Files a client sent instead of a URL. A job on an upload carries `upload:{upload_id}` as its
// source (its source_url, and what the fetch steps read): a scheme no user URL can have, since
// request URLs must be http(s), so an upload reference never reaches the network.
// Pure (no Node modules): workflow code imports it.

/** `upl_` and 24 letters and digits. */
export const UPLOAD_ID = /^upl_[A-Za-z0-9]{24}$/;
const SCHEME = 'upload:';

export function isUploadId(id: string): boolean {
  return UPLOAD_ID.test(id);
}

/** The source of a job on an upload. */
export function uploadSource(uploadId: string): string {
  return `${SCHEME}${uploadId}`;
}

/** The upload a job's source names, or null for a URL source. */
export function uploadIdOf(source: string): string | null {
  if (!source.startsWith(SCHEME)) return null;
  const id = source.slice(SCHEME.length);
  return isUploadId(id) ? id : null;
}

/** A job's source from its parameters: the URL, or the upload reference. */
export function sourceOf(params: { url?: string | null; upload_id?: unknown }): string {
  if (typeof params.upload_id === 'string') return uploadSource(params.upload_id);
  if (params.url) return params.url;
  throw new Error('a job has neither url nor upload_id');
}
