import crypto from 'node:crypto';
import type Koa from 'koa';
import { DomainError } from '../lib/errors';
import { log } from '../lib/logger';
import type { ApiState } from './context';
import { accountOf } from './context';

const TTL_MS = 24 * 3600_000;
// A first request that has not finished after this long is taken as lost (its process died).
const STALE_IN_PROGRESS_MS = 60_000;

/**
 * Beyond the contract: a create call with `Idempotency-Key` runs once per (account, key). A repeat
 * with the same body gets the stored response (header `Idempotent-Replayed: true`); a repeat with
 * another body gets 409; a repeat while the first is still running gets 409 too. Failed calls (4xx/5xx)
 * are not stored, so they can be retried.
 */
export function idempotency(): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!key) return next();
    if (key.length > 255) throw DomainError.invalid('Idempotency-Key must be at most 255 characters', [{ field: 'Idempotency-Key', message: 'too long' }]);
    const account = accountOf(ctx);
    const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
    const hash = crypto.createHash('sha256').update(`${ctx.method} ${ctx.path}\n${raw}`).digest('hex');
    const conn = ctx.state.em.getConnection();
    const now = Date.now();

    await conn.execute('delete from idempotency_keys where account_id = ? and key = ? and created_at < ?', [account.id, key, new Date(now - TTL_MS)], 'run');
    await conn.execute('delete from idempotency_keys where account_id = ? and key = ? and status is null and created_at < ?', [account.id, key, new Date(now - STALE_IN_PROGRESS_MS)], 'run');
    const claimed = await conn.execute(
      'insert into idempotency_keys (account_id, key, request_hash, status, response_body, created_at) values (?, ?, ?, null, null, ?) on conflict (account_id, key) do nothing',
      [account.id, key, hash, new Date(now)],
      'run',
    );
    if (Number((claimed as { affectedRows?: number }).affectedRows ?? 0) === 0) {
      const [row] = (await conn.execute('select request_hash, status, response_body from idempotency_keys where account_id = ? and key = ?', [account.id, key], 'all')) as {
        request_hash: string;
        status: number | null;
        response_body: string | null;
      }[];
      if (!row) throw DomainError.conflict('A request with this Idempotency-Key is being processed; retry in a moment');
      if (row.request_hash !== hash) throw DomainError.conflict('This Idempotency-Key was already used with a different request; use a new key for a new request');
      if (row.status === null) throw DomainError.conflict('A request with this Idempotency-Key is still being processed; retry in a moment');
      const body = JSON.parse(row.response_body ?? 'null') as { job_id?: string } | null;
      ctx.status = row.status;
      ctx.body = body;
      if (body?.job_id) ctx.set('Location', `/v1/jobs/${body.job_id}`);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    try {
      await next();
    } catch (err) {
      // the call's own error is the answer, even when the database also fails to drop the claim
      await conn.execute('delete from idempotency_keys where account_id = ? and key = ?', [account.id, key], 'run').catch(() => undefined);
      throw err;
    }
    if (ctx.status >= 200 && ctx.status < 300) {
      // the call has succeeded (a job is committed and charged): a database failing now must not turn it into an error a client retries
      await conn
        .execute('update idempotency_keys set status = ?, response_body = ? where account_id = ? and key = ?', [ctx.status, JSON.stringify(ctx.body), account.id, key], 'run')
        .catch((err: unknown) => log.warn({ err }, 'idempotency record not completed; a repeat of this key within a minute gets 409'));
    } else {
      await conn.execute('delete from idempotency_keys where account_id = ? and key = ?', [account.id, key], 'run');
    }
  };
}
