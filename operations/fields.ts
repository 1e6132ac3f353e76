// Request fields shared by several operations. Plain zod with `.meta()`: the same schema validates
// REST bodies, generates OpenAPI (zod-to-openapi reads .meta) and MCP tool schemas (z.toJSONSchema).
import { z } from 'zod';
import { canonicalUrl, urlSyntaxProblem } from '../lib/address-policy';
import { UPLOAD_ID } from '../lib/uploads';
import { MAX_TIME_SECONDS, parseTimeString, TIME_STRING_PATTERN } from '../lib/time';

/** An http(s) URL, stored and passed on only in its canonical form. */
function httpUrl(description: string, example: string) {
  return z
    .string({ error: 'is required' })
    .min(1, 'is required')
    .max(2048, 'must be at most 2048 characters')
    .superRefine((v, ctx) => {
      const problem = urlSyntaxProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform(canonicalUrl)
    .meta({ format: 'uri', description, example });
}

/** The source: a video or audio page, or a media file, on a public host. */
export const SourceUrl = httpUrl('URL of the video or audio (a platform page or a media file) on a public host; the host name within DNS limits (at most 253 characters, labels of at most 63)', 'https://www.youtube.com/watch?v=aqz-KE-bpKQ');

/** A file the account sent to POST /v1/uploads, in place of `url`. */
export const UploadIdField = z
  .string({ error: 'must be an upload id such as upl_… (POST /v1/uploads answers with one)' })
  .regex(UPLOAD_ID, 'must be an upload id such as upl_… (POST /v1/uploads answers with one)')
  .meta({ description: 'Instead of url: a file this account sent to POST /v1/uploads (give url or upload_id, not both)', example: 'upl_3mZ8qK1vT0bXy7PcLr2sWn4A' });

/** The source fields of an operation: a URL or an upload, exactly one of them (sourceProblems checks it). */
export const sourceFields = { url: SourceUrl.optional(), upload_id: UploadIdField.optional() };

type SourceFields = { url?: unknown; upload_id?: unknown };
// checked even when other fields are wrong, so a missing source is named with the rest
const whenObject = { when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null };

/** `.refine(...sourceRequired)`: url or upload_id must be given. */
export const sourceRequired: [(p: SourceFields) => boolean, { when: typeof whenObject.when; path: string[]; message: string }] = [
  (p) => p.url !== undefined || p.upload_id !== undefined,
  { ...whenObject, path: ['url'], message: 'is required (or upload_id: a file sent to POST /v1/uploads)' },
];

/** `.refine(...oneSource)`: not both of url and upload_id. */
export const oneSource: typeof sourceRequired = [
  (p) => p.url === undefined || p.upload_id === undefined,
  { ...whenObject, path: ['upload_id'], message: 'upload_id and url name two sources: give one of them' },
];

/** A one-off webhook target for this job's events (accepted on every async create call). */
export const WebhookUrl = httpUrl('Receives this job\'s job.completed / job.failed event, signed with the account\'s webhook secret', 'https://example.com/hooks/media')
  .nullable()
  .default(null);

/** A URL given to a webhook endpoint (same rules as every other URL the service calls). */
export const TargetUrl = httpUrl('Delivery target (http or https on a public host; the host name within DNS limits: at most 253 characters, labels of at most 63)', 'https://example.com/hooks/media');

const TIME_HELP = 'must be HH:MM:SS, MM:SS or a number of seconds';

/** `HH:MM:SS`, `MM:SS` or seconds, as a string or a number; normalised to a string (the caller's spelling). */
export const TimeString = z
  .union([
    z.string().regex(new RegExp(TIME_STRING_PATTERN), TIME_HELP),
    z.number({ error: TIME_HELP }).min(0, 'must not be negative').max(MAX_TIME_SECONDS, `must be at most ${MAX_TIME_SECONDS} seconds`),
  ], { error: TIME_HELP })
  // only for values the union took: a value it refused already has its one message
  .refine((v) => parseTimeString(v) !== null, { message: `${TIME_HELP}, at most ${MAX_TIME_SECONDS} seconds`, when: (payload) => payload.issues.length === 0 })
  .transform((v) => String(v))
  .meta({ examples: ['01:30', 90, '75.5'] });

export const LanguageCode = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, 'must be an ISO 639-1 language code such as "en" or "fr"')
  .meta({ example: 'en' });

/** An integer in [min, max] with a message that names the bounds. */
export function intIn(min: number, max: number) {
  const msg = `must be an integer from ${min} to ${max}`;
  return z.number({ error: msg }).int(msg).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
}
