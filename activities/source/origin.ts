// Where a source comes from, the first thing every source step asks.
import { probeDirectMedia, type DirectMedia } from '../../engines/direct-media';
import { checkUrlAddress } from '../../engines/egress/address-check';
import { JobFailure } from '../../lib/job-failure';
import { uploadIdOf } from '../../lib/uploads';
import { asRefusal } from '../step/egress-run';

/** An upload of the account's, a plain media file (a HEAD request says so), or a page for yt-dlp. */
export type SourceOrigin = { kind: 'upload'; uploadId: string } | { kind: 'direct'; media: DirectMedia } | { kind: 'extractor' };

/** Refuses a URL whose host resolves to an address the service never fetches from. */
export async function assertSafeSource(url: string, allowPrivateNetwork: boolean): Promise<void> {
  const check = await checkUrlAddress(url, allowPrivateNetwork);
  if (!check.ok) throw JobFailure.user('rejected', `The source URL ${check.reason}`);
}

/** An upload is known by its URL; any other source's address is checked before the HEAD request that tells a media file from a page. */
export async function originOf(url: string, opts: { uploads: boolean; allowPrivateNetwork: boolean; cookies?: boolean }): Promise<SourceOrigin> {
  const uploadId = opts.uploads ? uploadIdOf(url) : null;
  if (uploadId) return { kind: 'upload', uploadId };
  await assertSafeSource(url, opts.allowPrivateNetwork);
  // a site with cookies is fetched by yt-dlp alone, which holds them (a bare request would be refused)
  if (opts.cookies) return { kind: 'extractor' };
  const media = await probeDirectMedia(url, opts.allowPrivateNetwork).catch((err: unknown) => {
    throw asRefusal(err);
  });
  return media ? { kind: 'direct', media } : { kind: 'extractor' };
}
