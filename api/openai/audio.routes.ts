// POST /v1/audio/transcriptions and /v1/audio/translations, as OpenAI's API defines them, so its SDKs
// work with base_url pointed here. Each call is a transcribe or translate job (charged, listed,
// durable); the request waits on it and answers in OpenAI's shapes. Errors are OpenAI-shaped
// (api/error.middleware.ts).
import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import { z } from 'zod';
import type { Job } from '../../jobs/entity';
import { jobEnded, waitForJobEnd } from '../../jobs/job-end';
import { DECODING_FILE, type SegmentDecoding } from '../../engines/speech/whisper.engine';
import { DomainError } from '../../lib/errors';
import type { StoredFailureKind } from '../../lib/job-failure';
import { LanguageCode } from '../../operations/fields';
import { MAX_KNOWN_SPEAKERS, MODEL_SIZES, REFERENCE_SECONDS, type ModelSize } from '../../operations/transcribe/spec';
import { requireAuth } from '../auth.middleware';
import type { ApiContext, ApiDeps, ApiState } from '../context';
import { accountOf } from '../context';
import { openAiError } from '../error.middleware';
import { json, registry } from '../openapi';
import { createJob } from '../../jobs/service';
import { receiveUpload, uploadBytes } from '../../uploads/service';
import { parseInput } from '../../lib/validation';

const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
/** OpenAI's diarizing model: served by the largest installed Whisper with speaker labels. */
const DIARIZE_MODEL = 'gpt-4o-transcribe-diarize';
/** The header (and body field of a 202) naming the job behind a call. */
export const JOB_ID_HEADER = 'Mediasvc-Job-Id';

const MODEL_REQUIRED = `is required: whisper-1, ${DIARIZE_MODEL}, or an installed size (tiny, tiny.en, base, small, medium)`;
const AudioForm = z.object({
  model: z.string({ error: MODEL_REQUIRED }).min(1, MODEL_REQUIRED),
  language: LanguageCode.optional(),
  prompt: z.string().max(10_000).optional(),
  response_format: z.enum(RESPONSE_FORMATS, { error: `must be one of ${RESPONSE_FORMATS.join(', ')}` }).default('json'),
  temperature: z.coerce.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').optional(),
  timestamp_granularities: z.array(z.enum(['word', 'segment'], { error: 'must be word or segment' })).default([]),
  stream: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  url: z.string().optional(),
  known_speaker_names: z.array(z.string()).max(MAX_KNOWN_SPEAKERS, `must name at most ${MAX_KNOWN_SPEAKERS} speakers`).default([]),
  known_speaker_references: z.array(z.string()).max(MAX_KNOWN_SPEAKERS, `must hold at most ${MAX_KNOWN_SPEAKERS} clips`).default([]),
});
type AudioRequest = z.output<typeof AudioForm>;

const OpenAIErrorSchema = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }) })
  .meta({ id: 'OpenAIError' });
const OPENAI_ERROR_TEXT: Record<number, string> = {
  400: 'Invalid parameter (OpenAI\'s status for it), or the job failed (code job_failed)',
  401: 'Missing or invalid API key',
  402: 'Not enough credits',
  403: 'API key deactivated',
  404: 'An upload or route that does not exist',
  413: 'File over the plan\'s limit',
  415: 'Not audio or video, or not a multipart form',
  429: 'Rate limit exceeded',
  500: 'The job failed on a fault of the service: an internal error, its storage, or a step that timed out (refunded)',
  503: 'Job engine unavailable',
};

/** Failure kinds that are the service's fault, not the request's: answered 500, as OpenAI answers its own. */
const SERVICE_FAULTS = new Set<StoredFailureKind>(['internal', 'dependency', 'timeout']);

const TranscriptionSchema = z.object({ text: z.string() }).meta({ id: 'OpenAITranscription' });
const VerboseSchema = z
  .object({
    task: z.enum(['transcribe', 'translate']),
    language: z.string().meta({ description: 'The language\'s English name, lower case (OpenAI\'s form)' }),
    duration: z.number(),
    text: z.string(),
    segments: z.array(z.object({ id: z.number().int(), seek: z.number().int(), start: z.number(), end: z.number(), text: z.string(), tokens: z.array(z.number().int()), temperature: z.number(), avg_logprob: z.number(), compression_ratio: z.number(), no_speech_prob: z.number() })).optional(),
    words: z.array(z.object({ word: z.string(), start: z.number(), end: z.number() })).optional(),
  })
  .meta({ id: 'OpenAIVerboseTranscription' });
const DiarizedSchema = z
  .object({
    task: z.literal('transcribe'),
    duration: z.number(),
    text: z.string(),
    segments: z.array(z.object({ type: z.literal('transcript.text.segment'), id: z.string(), start: z.number(), end: z.number(), text: z.string(), speaker: z.string().meta({ description: 'A, B… in order of first speech' }) })),
  })
  .meta({ id: 'OpenAIDiarizedTranscription' });
const FormSchema = z.object({
  file: z.string().meta({ format: 'binary', description: 'The audio or video file (or give url)' }).optional(),
  url: z.string().optional().meta({ description: 'Extension: a source URL (any the service accepts) in place of file' }),
  model: z.string().min(1).meta({ description: `whisper-1 (the best installed model), ${DIARIZE_MODEL} (the same, for diarized_json), or an installed size: tiny, tiny.en, base, small, medium` }),
  language: z.string().optional().meta({ description: 'Transcriptions: the spoken language (ISO 639-1). Translations (extension): the target language, default en' }),
  prompt: z.string().optional().meta({ description: 'Accepted for compatibility; not used' }),
  response_format: z.enum(RESPONSE_FORMATS).optional(),
  temperature: z.number().optional().meta({ description: 'Accepted for compatibility; decoding uses its own temperature fallback' }),
  'timestamp_granularities[]': z.array(z.enum(['word', 'segment'])).optional().meta({ description: 'verbose_json: word and/or segment (the default)' }),
  'known_speaker_names[]': z.array(z.string()).optional().meta({ description: `diarized_json: up to ${MAX_KNOWN_SPEAKERS} names, each labelling the voice of the reference clip at the same place in known_speaker_references[]` }),
  'known_speaker_references[]': z.array(z.string()).optional().meta({ description: `diarized_json: data URLs (data:audio/…;base64,…) of ${REFERENCE_SECONDS[0]}–${REFERENCE_SECONDS[1]} s clips of each known speaker, at most 2 MB each` }),
  stream: z.boolean().optional().meta({ description: 'Transcriptions: text/event-stream of transcript.text.delta events (transcript.text.segment events with diarized_json, once the speakers are known), then transcript.text.done' }),
});

for (const [route, task] of [['/v1/audio/transcriptions', 'transcription'], ['/v1/audio/translations', 'translation']] as const) {
  registry.registerPath({
    method: 'post',
    path: route,
    operationId: task === 'transcription' ? 'createOpenAITranscription' : 'createOpenAITranslation',
    summary: `OpenAI-compatible ${task} (a ${task === 'transcription' ? 'transcribe' : 'translate'} job, charged as one; the call waits for it)`,
    description:
      `OpenAI's request and response shapes and its error shape ({"error": {...}}). Extensions: \`url\` in place of \`file\`${task === 'translation' ? '; `language` names the target (default en)' : ''}. ` +
      `A job still running after OPENAI_WAIT_SECONDS (default 300) is answered 202 with its id in the ${JOB_ID_HEADER} header and the body; poll GET /v1/jobs/{job_id}.`,
    request: { body: { required: true, content: { 'multipart/form-data': { schema: FormSchema } } } },
    responses: {
      200: {
        description: 'json: {text}; verbose_json; diarized_json (transcriptions: segments with speaker labels, 1 credit more); text, srt and vtt as text/plain, application/x-subrip and text/vtt',
        content: { 'application/json': { schema: z.union([TranscriptionSchema, VerboseSchema, DiarizedSchema]) }, 'text/plain': { schema: z.string() }, 'application/x-subrip': { schema: z.string() }, 'text/vtt': { schema: z.string() }, 'text/event-stream': { schema: z.string() } },
      },
      202: { description: 'The job is still running: poll it', ...json(z.object({ job_id: z.string(), status: z.string(), detail: z.string() })) },
      ...Object.fromEntries(
        Object.entries(OPENAI_ERROR_TEXT).map(([status, description]) => [status, { description, ...json(OpenAIErrorSchema) }]),
      ),
    },
  });
}

/** Form fields that are lists (sent as `name[]`, once per value). */
const LIST_FIELDS = new Set(['timestamp_granularities', 'known_speaker_names', 'known_speaker_references']);

/** The form's fields as one value each (arrays for the list fields). */
function formValues(fields: Record<string, string[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(fields)) {
    const key = name.replace(/\[\]$/, '');
    if (LIST_FIELDS.has(key)) out[key] = [...((out[key] as string[] | undefined) ?? []), ...values];
    else if (key in AudioForm.shape) out[key] = values[values.length - 1];
  }
  return out;
}

/** OpenAI's model names → an installed size: whisper-1 is the largest installed. */
function modelSize(deps: ApiDeps, model: string): ModelSize {
  const served = deps.speech.registry.servedSizes();
  if (model === 'whisper-1' || model === DIARIZE_MODEL) {
    const best = served[served.length - 1];
    if (!best) throw DomainError.invalidField('model', 'cannot be served: no speech model is installed on this server');
    return best;
  }
  const size = model.replace(/\.en$/, '') as ModelSize;
  if (!(MODEL_SIZES as readonly string[]).includes(size) || !served.includes(size)) {
    throw DomainError.invalidField('model', `"${model}" is not installed here; use whisper-1 or an installed size: ${deps.speech.registry.describeInstalled()}`);
  }
  return size;
}

/** The job once it has ended (the one wait on its workflow); null when the wait is over first or the client has gone. */
async function waitForEnd(ctx: ApiContext, deps: ApiDeps, jobId: string, seconds: number): Promise<Job | null> {
  const gone = new AbortController();
  // the connection closed before an answer: the client has gone (the job runs on)
  ctx.res.once('close', () => !ctx.res.writableFinished && gone.abort());
  const job = await waitForJobEnd(ctx.state.em, deps.orchestrator, accountOf(ctx).id, jobId, { seconds, signal: gone.signal });
  return job && jobEnded(job) ? job : null;
}

interface TranscriptFile {
  segments: { start: number; end: number; text: string; speaker?: string; original?: string; words?: { word: string; start: number; end: number }[] }[];
}

/** A labelled segment as OpenAI's diarized_json and its stream events carry it. */
const diarizedSegment = (s: TranscriptFile['segments'][number], i: number) => ({ type: 'transcript.text.segment' as const, id: `seg_${i}`, start: s.start, end: s.end, text: s.text, speaker: s.speaker ?? 'A' });

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
const languageName = (code: string) => (languageNames.of(code) ?? code).toLowerCase();

/** The body of a completed job in the requested response format. */
async function rendered(deps: ApiDeps, job: Job, req: AudioRequest, task: 'transcribe' | 'translate'): Promise<{ type: string; body: string | object }> {
  const output = async (): Promise<string> => {
    const content = job.outputFile ? await deps.storage.readOutputText(job.outputFile) : null;
    if (content === null) throw new DomainError('gone', `The output of job ${job.id} is no longer stored; create a new job`);
    return content;
  };
  const data = job.resultData ?? {};
  const text = String(task === 'transcribe' ? data.text : data.translated_text);
  switch (req.response_format) {
    case 'json':
      return { type: 'application/json', body: { text } };
    case 'text':
      return { type: 'text/plain; charset=utf-8', body: `${text}\n` };
    case 'srt':
      return { type: 'application/x-subrip; charset=utf-8', body: await output() };
    case 'vtt':
      return { type: 'text/vtt; charset=utf-8', body: await output() };
    case 'diarized_json': {
      const transcript = JSON.parse(await output()) as TranscriptFile;
      return { type: 'application/json', body: { task: 'transcribe', duration: Number(data.duration ?? 0), text, segments: transcript.segments.map(diarizedSegment) } };
    }
    case 'verbose_json': {
      const transcript = JSON.parse(await output()) as TranscriptFile;
      const decodingFile = await deps.storage.readOutputText(deps.storage.outputRelative(job.id, DECODING_FILE));
      let decoding: (SegmentDecoding | null)[] = [];
      try {
        decoding = decodingFile ? (JSON.parse(decodingFile) as { segments: (SegmentDecoding | null)[] }).segments : [];
      } catch {
        // decoder figures are extras: without them the segments carry zeros, as for older jobs
      }
      const granularities = req.timestamp_granularities.length ? req.timestamp_granularities : ['segment'];
      const language = task === 'transcribe' ? String(data.language) : String(data.target_language);
      const body: Record<string, unknown> = { task, language: languageName(language), duration: Number(data.duration ?? 0), text };
      if (granularities.includes('segment')) {
        body.segments = transcript.segments.map((s, i) => {
          const d = decoding[i];
          return { id: d?.id ?? i, seek: d?.seek ?? 0, start: s.start, end: s.end, text: s.text, tokens: d?.tokens ?? [], temperature: d?.temperature ?? 0, avg_logprob: d?.avg_logprob ?? 0, compression_ratio: d?.compression_ratio ?? 0, no_speech_prob: d?.no_speech_prob ?? 0 };
        });
      }
      if (granularities.includes('word')) body.words = transcript.segments.flatMap((s) => (s.words ?? []).map((w) => ({ word: w.word, start: w.start, end: w.end })));
      return { type: 'application/json', body };
    }
  }
}

/**
 * A transcription as Server-Sent Events, while it runs: a `transcript.text.delta` per segment as
 * Whisper recognises it (the speech step's heartbeats carry the latest segments), then
 * `transcript.text.done` with the whole text. Segments a poll missed are sent from the output file.
 */
function streamTranscription(ctx: ApiContext, deps: ApiDeps, jobId: string, diarized: boolean): void {
  const out = new PassThrough();
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = out;
  let open = true;
  ctx.res.once('close', () => (open = false));
  out.once('close', () => (open = false));
  const send = (event: object) => out.write(`data: ${JSON.stringify(event)}\n\n`);
  let sent = 0;
  const delta = (text: string) => send({ type: 'transcript.text.delta', delta: sent++ === 0 ? text : ` ${text}` });
  const account = accountOf(ctx);
  const run = async () => {
    out.write(`: job ${jobId}\n\n`);
    const closed = new AbortController();
    out.once('close', () => closed.abort());
    let over = false;
    const end = waitForJobEnd(ctx.state.em, deps.orchestrator, account.id, jobId, { seconds: deps.config.openaiWaitSeconds, signal: closed.signal }).finally(() => (over = true));
    // while the one wait runs, the heartbeat's latest segments: those past what was sent, in order
    while (open && !over) {
      const live = diarized ? undefined : (await deps.orchestrator.jobDetails(jobId))?.recognised;
      if (live && live.count > sent && live.count - sent <= live.recent.length) for (const text of live.recent.slice(live.recent.length - (live.count - sent))) delta(text);
      await Promise.race([end, new Promise((r) => setTimeout(r, 500))]);
    }
    const job = await end;
    if (!open) return;
    if (job?.status === 'completed') {
      const content = job.outputFile ? await deps.storage.readOutputText(job.outputFile) : null;
      const transcript = (content ? JSON.parse(content) : { segments: [] }) as TranscriptFile;
      // speakers are known once the recognition has ended: labelled segments are sent then, each an event
      if (diarized) transcript.segments.forEach((seg, i) => send(diarizedSegment(seg, i)));
      else for (const seg of transcript.segments.slice(sent)) delta(seg.text);
      send({ type: 'transcript.text.done', text: String(job.resultData?.text ?? '') });
      return;
    }
    const failed = job?.status === 'failed';
    const message = failed ? (job.errorMessage ?? 'The job failed') : `The job is still running after ${deps.config.openaiWaitSeconds} s; poll GET /v1/jobs/${jobId}`;
    send(openAiError(400, message, null, failed ? 'job_failed' : 'still_running'));
  };
  run()
    .catch((err: unknown) => send(openAiError(500, 'The transcription could not be streamed; read the job with GET /v1/jobs/' + jobId, null, String(err instanceof Error ? err.name : 'error'))))
    .finally(() => out.end());
}

/** A data URL of a known speaker's clip, base64 (about 2 MB of audio): a form field this large is allowed on these routes. */
const REFERENCE_FIELD_BYTES = Math.ceil((2 * 1024 * 1024 * 4) / 3) + 256;

/**
 * OpenAI's known speakers (names, and clips as data URLs at the same places) as uploads of the
 * account, each checked now: audio, 2–10 s. What POST /v1/transcribe takes as known_speakers.
 */
async function knownSpeakers(ctx: ApiContext, deps: ApiDeps, req: AudioRequest): Promise<{ name: string; upload_id: string }[]> {
  const names = req.known_speaker_names;
  const refs = req.known_speaker_references;
  if (names.length !== refs.length) throw DomainError.invalidField('known_speaker_references[]', `must hold one clip per name in known_speaker_names[] (${names.length} names, ${refs.length} clips)`);
  const out: { name: string; upload_id: string }[] = [];
  for (const [i, ref] of refs.entries()) {
    const field = `known_speaker_references[${i}]`;
    const m = /^data:([a-z0-9.+/-]*)(?:;[a-z0-9=.+-]+)*;base64,([A-Za-z0-9+/=\s]+)$/i.exec(ref);
    if (!m) throw DomainError.invalidField(field, 'must be a data URL of audio, data:audio/…;base64,…');
    const clip = await uploadBytes(ctx.state.em, deps, accountOf(ctx), Buffer.from(m[2]!, 'base64'), `${names[i]}.${(m[1] ?? '').split('/')[1] ?? 'audio'}`).catch((err: unknown) => {
      if (err instanceof DomainError && err.kind === 'unsupported_media_type') throw DomainError.invalidField(field, 'is not audio or video');
      throw err;
    });
    const [min, max] = REFERENCE_SECONDS;
    if (clip.duration !== null && (clip.duration < min || clip.duration > max)) throw DomainError.invalidField(field, `is ${clip.duration.toFixed(1)} s long; give ${min}–${max} s of that voice alone`);
    out.push({ name: names[i]!, upload_id: clip.upload_id });
  }
  return out;
}

export function openAiAudioRoutes(deps: ApiDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.use(['/v1/audio/transcriptions', '/v1/audio/translations'], requireAuth());
  for (const [route, task] of [['/v1/audio/transcriptions', 'transcribe'], ['/v1/audio/translations', 'translate']] as const) {
    router.post(route, async (ctx) => {
      const account = accountOf(ctx);
      const { upload, fields } = await receiveUpload(ctx.state.em, deps, account, ctx.req, { fileField: 'file', formOnly: true, fieldBytes: REFERENCE_FIELD_BYTES }).catch((err: unknown) => {
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        throw err;
      });
      const req = parseInput(AudioForm, formValues(fields));
      if (!upload && !req.url) throw DomainError.invalidField('file', 'is required (or url: a source URL, an extension of this service)');
      if (upload && req.url) throw DomainError.invalidField('url', 'and file name two sources: give one of them');
      if (req.stream === 'true' && task === 'translate') throw DomainError.invalidField('stream', 'is supported on transcriptions only');
      const diarize = req.response_format === 'diarized_json';
      if (diarize && task === 'translate') throw DomainError.invalidField('response_format', 'diarized_json is supported on transcriptions only');
      const source = upload ? { upload_id: upload.upload_id } : { url: req.url };
      const outputFormat = req.response_format === 'srt' || req.response_format === 'vtt' ? req.response_format : 'json';
      const words = req.response_format === 'verbose_json' && req.timestamp_granularities.includes('word');
      const known = await knownSpeakers(ctx, deps, req);
      if (known.length && !diarize) throw DomainError.invalidField('known_speaker_names[]', 'names speakers in diarized_json: set response_format=diarized_json');
      const speakers = known.length ? { known_speakers: known } : diarize ? { diarize: true } : {};
      // an English-only model (tiny.en…) names the spoken language
      const spoken = req.model.endsWith('.en') ? 'en' : null;
      const body =
        task === 'transcribe'
          ? { ...source, language: req.language ?? spoken, output_format: outputFormat, word_timestamps: words, model_size: modelSize(deps, req.model), ...speakers }
          : { ...source, source_language: spoken, target_language: req.language ?? 'en', output_format: outputFormat, model_size: modelSize(deps, req.model) };
      const created = await createJob(ctx.state.em, deps, account, task, body);
      ctx.set(JOB_ID_HEADER, created.job_id);
      if (req.stream === 'true') return streamTranscription(ctx, deps, created.job_id, diarize);
      const job = await waitForEnd(ctx, deps, created.job_id, deps.config.openaiWaitSeconds);
      if (!job) {
        ctx.status = 202;
        ctx.set('Location', `/v1/jobs/${created.job_id}`);
        ctx.body = { job_id: created.job_id, status: 'processing', detail: `The job is still running after ${deps.config.openaiWaitSeconds} s; poll GET /v1/jobs/${created.job_id}` };
        return;
      }
      if (job.status === 'failed') {
        // the service's own faults are a 500; the user's errors, and a source or tool that kept failing, a 400
        ctx.status = job.failureKind && SERVICE_FAULTS.has(job.failureKind) ? 500 : 400;
        ctx.body = openAiError(ctx.status, job.errorMessage ?? 'The job failed', null, 'job_failed');
        return;
      }
      const out = await rendered(deps, job, req, task);
      ctx.type = out.type;
      ctx.body = out.body;
    });
  }
  return router;
}
