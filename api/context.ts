import type { EntityManager, MikroORM } from '@mikro-orm/core';
import type Koa from 'koa';
import type { RequestStages } from '../lib/request-stages';
import type { Account } from '../accounts/entity';
import type { ApiKey } from '../keys/entity';
import type { AuthResult } from '../accounts/repository';
import type { SpeechServices } from '../engines/speech/services';
import type { Storage } from '../engines/storage';
import type { Config } from '../lib/config';
import type { FileLinks } from '../lib/file-links';
import type { JobDispatcher } from '../jobs/dispatcher';
import type { Orchestrator } from '../jobs/orchestrator';

/** Everything the HTTP layer depends on; built once per process. */
export interface ApiDeps {
  orm: MikroORM;
  config: Config;
  orchestrator: Orchestrator;
  /** Starts the workflows of committed jobs (the outbox's sender). */
  dispatcher: JobDispatcher;
  links: FileLinks;
  storage: Storage;
  /** Installed Whisper models and translation pairs (checks at creation, GET /v1/languages). */
  speech: SpeechServices;
}

export interface ApiState {
  em: EntityManager;
  auth?: AuthResult;
  account?: Account;
  apiKey?: ApiKey;
  /** X-Request-Id: the client's, or one made up for this request. */
  requestId?: string;
  /** The request's stage times (sent as Server-Timing when SERVER_TIMING is on). */
  stages?: RequestStages;
}

export type ApiContext = Koa.ParameterizedContext<ApiState>;

/** The authenticated account's id, without hydrating the account; requireAuth has run before any route that calls this. */
export function accountIdOf(ctx: ApiContext): string {
  if (ctx.state.auth?.ok) return ctx.state.auth.accountId;
  return accountOf(ctx).id;
}

/** The authenticated account; requireAuth has run before any route that calls this. */
export function accountOf(ctx: ApiContext): Account {
  if (!ctx.state.account) throw new Error('route is missing requireAuth');
  return ctx.state.account;
}
