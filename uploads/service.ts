// Uploads: a client's own file as a job's source. The body is streamed to storage (never held in
// memory), cut off with a 413 at the plan's limit, and checked with ffprobe before it is kept.
import { parseSubtitles } from '../engines/speech/subtitles';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityManager } from '@mikro-orm/core';
import busboy from 'busboy';
import type { Account } from '../accounts/entity';
import { Upload } from './entity';
import { createFfmpegEngine } from '../engines/ffmpeg/ffmpeg.engine';
import { describeNonMedia, mediaContentType, STILL_IMAGE_FORMATS } from '../engines/media-sniff';
import { DomainError } from '../lib/errors';
import { formatBytes, sourceLimits } from '../lib/plans';
import { isUploadId } from '../lib/uploads';
import type { ApiDeps } from '../api/context';

/** The Upload resource. */
export interface UploadResource {
  upload_id: string;
  filename: string;
  size: number;
  content_type: string;
  created_at: string;
  expires_at: string;
}

/** A request body read to a file: the file part of a multipart form (with its other fields) or a raw body. */
export interface ReceivedBody {
  fields: Record<string, string[]>;
  file: { path: string; filename: string; size: number } | null;
}

class TooLarge extends Error {}

function newUploadId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  // 62 letters from bytes: the slight bias of b % 62 costs a fraction of a bit of 140
  return `upl_${Array.from(crypto.randomBytes(24), (b) => alphabet[b % alphabet.length]).join('')}`;
}

/** Counts bytes through; fails the stream once they pass `max`. */
function byteLimit(max: number): Transform & { bytes: () => number } {
  let n = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      n += chunk.length;
      if (n > max) return cb(new TooLarge());
      cb(null, chunk);
    },
  });
  return Object.assign(t, { bytes: () => n });
}

function tooLarge(maxBytes: number, setBy: string): DomainError {
  return new DomainError('payload_too_large', `The file is larger than ${formatBytes(maxBytes)}, the upload limit of ${setBy}`);
}

/** A file name a client gave, kept for display: no path, no control characters, at most 255 characters. */
function cleanFilename(name: string | undefined | null): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return clean || 'upload';
}

/** `filename` of a Content-Disposition header (`filename*=UTF-8''…` preferred). */
function dispositionFilename(header: string | undefined): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      return null;
    }
  }
  return /filename\s*=\s*"?([^";]+)"?/.exec(header)?.[1] ?? null;
}

/**
 * Reads the request body into `partPath`: the `fileField` part of a multipart form (other fields are
 * collected, other files discarded) or, for any other content type, the raw body. More than
 * `maxBytes` of file stops the read with a 413 (the client is told to close the connection).
 */
export async function receiveBody(req: IncomingMessage, opts: { partPath: string; maxBytes: number; limitSetBy: string; fileField: string; formOnly?: boolean; fieldBytes?: number }): Promise<ReceivedBody> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  const type = req.headers['content-type'] ?? '';
  const multipart = /^multipart\/form-data/i.test(type);
  if (!multipart && opts.formOnly) throw new DomainError('unsupported_media_type', `Send the request as multipart/form-data (it is ${type || 'without a Content-Type'})`);
  // a form's boundaries and fields add a little to the file: the declared length is trusted only past that
  if (Number.isFinite(declared) && declared > opts.maxBytes + (multipart ? 1024 * 1024 : 0)) throw tooLarge(opts.maxBytes, opts.limitSetBy);
  await fsp.mkdir(path.dirname(opts.partPath), { recursive: true });
  try {
    if (!multipart) {
      const limit = byteLimit(opts.maxBytes);
      await pipeline(req, limit, fs.createWriteStream(opts.partPath));
      return { fields: {}, file: { path: opts.partPath, filename: cleanFilename(dispositionFilename(req.headers['content-disposition'])), size: limit.bytes() } };
    }
    return await receiveMultipart(req, opts);
  } catch (err) {
    await fsp.rm(opts.partPath, { force: true });
    if (err instanceof TooLarge) throw tooLarge(opts.maxBytes, opts.limitSetBy);
    if (err instanceof DomainError) throw err;
    throw new DomainError('bad_request', `The request body could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A form field's text at most (a form that names known speakers by data URL raises it). */
const FIELD_BYTES = 64 * 1024;

function receiveMultipart(req: IncomingMessage, opts: { partPath: string; maxBytes: number; fileField: string; fieldBytes?: number }): Promise<ReceivedBody> {
  return new Promise((resolve, reject) => {
    // no prototype: a field may be named __proto__ or constructor
    const fields: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
    let file: ReceivedBody['file'] = null;
    let writing: Promise<void> | null = null;
    let failed = false;
    let bb: busboy.Busboy;
    try {
      // fields are held in memory: with larger fields, fewer of them
      const fieldSize = opts.fieldBytes ?? FIELD_BYTES;
      bb = busboy({ headers: req.headers, limits: { fileSize: opts.maxBytes, files: 4, fields: fieldSize > FIELD_BYTES ? 24 : 64, fieldSize } });
    } catch (err) {
      reject(new DomainError('bad_request', `The multipart body could not be read: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      reject(err);
    };
    bb.on('field', (name, value, info) => {
      // a cut value would be read as if whole
      if (info.valueTruncated) fail(new DomainError('payload_too_large', `The form field ${name} is larger than ${Math.round((opts.fieldBytes ?? FIELD_BYTES) / 1024)} KB`));
      else (fields[name] ??= []).push(value);
    });
    bb.on('file', (name, stream, info) => {
      // a browser sends a file input left empty as a part with no file name and no bytes
      if (name !== opts.fileField || writing || !info.filename) {
        stream.resume();
        return;
      }
      const limit = byteLimit(opts.maxBytes);
      stream.on('limit', () => fail(new TooLarge()));
      writing = pipeline(stream, limit, fs.createWriteStream(opts.partPath)).then(() => {
        file = { path: opts.partPath, filename: cleanFilename(info.filename), size: limit.bytes() };
      });
      writing.catch(fail);
    });
    bb.on('error', (err) => fail(err instanceof Error ? err : new Error(String(err))));
    bb.on('close', () => {
      void (writing ?? Promise.resolve()).then(
        () => {
          if (!failed) resolve({ fields, file });
        },
        () => undefined,
      );
    });
    req.pipe(bb);
  });
}

/** ffprobe on the received file: its content type, or a 415 naming what it is when it is not audio or video. */
async function checkMedia(deps: Pick<ApiDeps, 'config'>, file: string): Promise<{ contentType: string; duration: number | null }> {
  const ffmpeg = createFfmpegEngine(deps.config);
  const probed = await ffmpeg.probe(file).catch(() => null);
  const video = probed?.streams.find((s) => s.codec_type === 'video');
  const audio = probed?.streams.find((s) => s.codec_type === 'audio');
  const still = probed && STILL_IMAGE_FORMATS.test(probed.format.format_name ?? '');
  if (probed && (audio || video) && !still) return { contentType: mediaContentType(probed.format.format_name ?? '', Boolean(video)), duration: probed.format.duration ?? null };
  const head = Buffer.alloc(512);
  const fd = await fsp.open(file, 'r');
  let n = 0;
  try {
    n = (await fd.read(head, 0, head.length, 0)).bytesRead;
  } finally {
    await fd.close();
  }
  const subtitles = probed && (audio || video) ? null : await subtitleFile(file);
  if (subtitles) return subtitles;
  const what = probed && !still ? 'a file with no audio or video stream' : describeNonMedia(head.subarray(0, n));
  throw new DomainError('unsupported_media_type', `The upload is ${what}, not audio or video; send a media file (mp4, webm, mkv, mov, mp3, m4a, wav, flac, ogg…), or a subtitle file (SRT, WebVTT) to translate`);
}

/** Largest subtitle file an upload may be (a feature film's SRT is about 100 kB). */
const SUBTITLE_UPLOAD_MAX_BYTES = 5 * 1024 * 1024;

/** A received SRT or WebVTT file (UTF-8 text with at least one cue): translate jobs take it as their source. */
async function subtitleFile(file: string): Promise<{ contentType: string; duration: number | null } | null> {
  const stat = await fsp.stat(file);
  if (stat.size > SUBTITLE_UPLOAD_MAX_BYTES) return null;
  const bytes = await fsp.readFile(file);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  const parsed = parseSubtitles(text);
  if (!parsed) return null;
  return { contentType: parsed.format === 'vtt' ? 'text/vtt' : 'application/x-subrip', duration: Math.max(...parsed.cues.map((c) => c.end)) };
}

export function presentUpload(u: Upload): UploadResource {
  return { upload_id: u.id, filename: u.filename, size: u.size, content_type: u.contentType, created_at: u.createdAt.toISOString(), expires_at: u.expiresAt.toISOString() };
}

/** A new upload of the account from the request body (multipart field `file`, or the raw body). */
export async function createUpload(em: EntityManager, deps: Pick<ApiDeps, 'config' | 'storage'>, account: Account, req: IncomingMessage): Promise<UploadResource> {
  const { upload } = await receiveUpload(em, deps, account, req, { fileField: 'file' });
  if (!upload) throw DomainError.invalidField('file', 'is required: send the media as a multipart/form-data field named "file", or as the raw request body with its Content-Type');
  return upload;
}

/**
 * Streams the request body to storage as a new upload of the account (its size within the plan's
 * limit, its content audio or video) and answers with the form's other fields; a form with no file
 * part gives no upload.
 */
export async function receiveUpload(
  em: EntityManager,
  deps: Pick<ApiDeps, 'config' | 'storage'>,
  account: Account,
  req: IncomingMessage,
  opts: { fileField: string; formOnly?: boolean; fieldBytes?: number },
): Promise<{ upload: UploadResource | null; fields: Record<string, string[]> }> {
  const fileField = opts.fileField;
  const limits = sourceLimits(account.plan, deps.config);
  const id = newUploadId();
  const partPath = `${deps.storage.uploadPath(id)}.part`;
  const body = await receiveBody(req, { partPath, maxBytes: limits.maxBytes, limitSetBy: limits.bytesSetBy, fileField, formOnly: opts.formOnly, fieldBytes: opts.fieldBytes });
  if (!body.file) return { upload: null, fields: body.fields };
  const { duration: _measured, ...upload } = await keepUpload(em, deps, account, id, body.file);
  return { upload, fields: body.fields };
}

/** An upload of the account from bytes already in hand (a clip sent as a data URL), within the plan's size limit; with its measured duration. */
export async function uploadBytes(em: EntityManager, deps: Pick<ApiDeps, 'config' | 'storage'>, account: Account, bytes: Buffer, filename: string): Promise<UploadResource & { duration: number | null }> {
  const limits = sourceLimits(account.plan, deps.config);
  if (bytes.length > limits.maxBytes) throw tooLarge(limits.maxBytes, limits.bytesSetBy);
  const id = newUploadId();
  const partPath = `${deps.storage.uploadPath(id)}.part`;
  await fsp.mkdir(path.dirname(partPath), { recursive: true });
  await fsp.writeFile(partPath, bytes);
  return keepUpload(em, deps, account, id, { path: partPath, filename: cleanFilename(filename), size: bytes.length });
}

/** A received file checked as audio or video, kept in storage with what a worker needs to know of it, and its row written. */
async function keepUpload(em: EntityManager, deps: Pick<ApiDeps, 'config' | 'storage'>, account: Account, id: string, file: { path: string; filename: string; size: number }): Promise<UploadResource & { duration: number | null }> {
  try {
    const { contentType, duration } = await checkMedia(deps, file.path);
    await fsp.rename(file.path, deps.storage.uploadPath(id));
    await deps.storage.commitUpload(id, { filename: file.filename, content_type: contentType, duration });
    const now = new Date();
    const row = em.create(Upload, {
      id,
      accountId: account.id,
      filename: file.filename,
      size: file.size,
      contentType,
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.config.downloadUrlTtlMinutes * 60_000),
    });
    await em.persistAndFlush(row);
    return { ...presentUpload(row), duration };
  } catch (err) {
    await fsp.rm(file.path, { force: true });
    await deps.storage.removeUpload(id);
    throw err;
  }
}

/** Removes an upload: its row and its bytes. */
export async function deleteUpload(em: EntityManager, deps: Pick<ApiDeps, 'storage'>, uploadId: string): Promise<void> {
  await em.nativeDelete(Upload, { id: uploadId });
  await deps.storage.removeUpload(uploadId);
}

/** The account's upload, unexpired; 404 for an id of another account or none, 410 once it has expired. */
export async function findAccountUpload(em: EntityManager, account: Pick<Account, 'id'>, uploadId: string, field = 'upload_id'): Promise<Upload> {
  const row = isUploadId(uploadId) ? await em.findOne(Upload, { id: uploadId, accountId: account.id }) : null;
  if (!row) throw new DomainError('not_found', `${field}: no upload with id ${uploadId} in this account (POST /v1/uploads makes one)`);
  if (row.expiresAt.getTime() <= Date.now()) throw new DomainError('gone', `${field}: upload ${uploadId} expired at ${row.expiresAt.toISOString()}; upload the file again`);
  return row;
}
