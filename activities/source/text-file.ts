// A source that is a small text file (a subtitle file to translate), read whole: from storage for an
// upload, else over HTTP through the address checks, following redirects (each checked again).
import { platformGate } from '../../engines/egress/platform-gate';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { readBody } from '../../engines/egress/http-client';
import { checkedGet } from './checked-get';
import type { Storage } from '../../engines/storage';
import { JobFailure } from '../../lib/job-failure';
import { uploadIdOf } from '../../lib/uploads';

/** Largest text source read (a feature film's subtitles are about 100 kB). */
export const TEXT_SOURCE_MAX_BYTES = 5 * 1024 * 1024;

/** Puts the text file at `url` (or the upload it names) in the job's work folder; returns its path relative to that folder. */
export async function fetchTextFile(deps: { storage: Storage; allowPrivateNetwork: boolean }, jobId: string, url: string): Promise<string> {
  const relative = path.join('text-source', 'source.txt');
  const dest = path.join(deps.storage.workDirOf(jobId), relative);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  const upload = uploadIdOf(url);
  if (upload) {
    if (!(await deps.storage.fetchUpload(upload, dest))) throw JobFailure.user('unavailable', `Upload ${upload} is no longer stored: it expired before the job ran; upload the file again`);
    return relative;
  }
  await fs.writeFile(dest, await platformGate().hold(url, () => readText(url, deps.allowPrivateNetwork), Context.current().cancellationSignal));
  return relative;
}

async function readText(url: string, allowPrivate: boolean): Promise<string> {
  const { res } = await checkedGet(url, { allowPrivate, signal: Context.current().cancellationSignal, accept: 'text/vtt, application/x-subrip, text/plain;q=0.9, */*;q=0.1' });
  try {
    return await readBody(res, TEXT_SOURCE_MAX_BYTES);
  } catch {
    throw JobFailure.user('rejected', `The subtitle file is larger than ${TEXT_SOURCE_MAX_BYTES / 1024 / 1024} MB`);
  }
}
