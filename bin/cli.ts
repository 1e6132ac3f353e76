import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { Account, PLAN_NAMES, PLANS, type PlanName } from '../accounts/entity';
import { createAccount, createApiKey, deleteKey, rotateWebhookSecret, setKeyActive, setPlan } from '../accounts/repository';
import { findOwner, ownerEmailProblem, setOwnerEmail } from '../accounts/owners.repository';
import { ApiKey } from '../keys/entity';
import { adjustCredits, currentBalance } from '../credits/repository';
import { closeKeyUsage } from '../keys/usage.repository';
import { rateLimitsWritten } from '../db/rate-limit.repository';
import { resealStoredSecrets, secretBoxOf } from '../db/sealed-secrets';
import { openOrm } from '../db/orm';
import { loadSecretBox, newSecretKeyText, readKeyFile, writeKeyFile } from '../lib/secret-box';
import { loadConfig, type Config } from '../lib/config';
import { log, setLogLevel } from '../lib/logger';
import { startHeapTrim } from '../lib/heap-trim';
import { isTaskQueue, TASK_QUEUES, type TaskQueue } from '../lib/queues';
import { CookieFileError, processCookieStore } from '../engines/ytdlp/site-cookies';
import { currentYtdlp } from '../engines/ytdlp/current-version';

// glibc read MALLOC_ARENA_MAX at start; children (ffmpeg, yt-dlp, Whisper) run with glibc's default,
// but a worker process of ours is the service's own and keeps one arena
const oneArena = Boolean(process.env.MEDIASVC_DEFAULT_ARENAS);
if (oneArena) {
  delete process.env.MALLOC_ARENA_MAX;
  delete process.env.MEDIASVC_DEFAULT_ARENAS;
}

const HELP = `mediasvc — operator CLI of the media processing service

Usage: bin/mediasvc <command> [options]

Run:
  serve                          API, workers for every queue, and (unless TEMPORAL_ADDRESS
                                 is set) the embedded Temporal dev server; what 'make run' starts
  api                            the HTTP API only (needs TEMPORAL_ADDRESS or a running serve)
  worker --queues Q1,Q2          workers for the given queues: ${TASK_QUEUES.join(', ')}
  migrate                        apply database migrations
  storage create-bucket          make S3_BUCKET when it is missing (STORAGE=s3; compose.scale-out.yaml runs it)

Accounts and credits:
  accounts create --name N --plan ${PLAN_NAMES.join('|')} [--email OWNER_EMAIL]
                                 prints the new account id on its last line
  accounts list
  accounts credits ACCOUNT [--add N]
                                 prints the balance on its last line (N may be negative)
  accounts plan ACCOUNT --plan ${PLAN_NAMES.join('|')}
                                 the rate limit changes within 2 s, the allowance at the next top-up
  accounts webhook-secret ACCOUNT [--rotate]
                                 the secret that signs per-job webhook_url deliveries

Dashboard (/dashboard):
  accounts login-link ACCOUNT    prints a one-time sign-in URL on its last line (valid 15 minutes)
  accounts owner ACCOUNT [--email OWNER_EMAIL]
                                 shows or sets the email the owner signs in with

yt-dlp without a release (YTDLP_TOOLS_DIR; run it where the media workers run):
  tools yt-dlp update [--version V]
                                 installs V (default: PyPI's newest) with the yt-dlp-ejs it pins, checks it on
                                 built-in fixtures and makes it current for the next step; a failing check
                                 keeps the old one (exit 1)
  tools yt-dlp rollback          back to the version in use before the last update
  tools yt-dlp status            the version in use, the earlier ones kept, and yt-dlp's own report of
                                 its JS runtimes, JS challenge and PO token providers, and yt-dlp-ejs

Cookies per site (for yt-dlp, only on that site's sources; sealed with the secrets key):
  cookies set --site SITE FILE   a Netscape cookie file (- for standard input); other sites' cookies are left out
  cookies list                   sites, how many cookies, earliest expiry; never the values
  cookies delete --site SITE

API keys:
  keys create --account ACCOUNT --name NAME
                                 prints the full vc_ key on its last line, once
  keys list --account ACCOUNT    id, first 8 chars, name, active|inactive, created_at, last_used_at
  keys deactivate KEY_ID | keys activate KEY_ID | keys delete KEY_ID

Stored secrets (webhook secrets and the download-link key, sealed with AES-256-GCM):
  secrets rotate [--new-key] [--forget-previous]
                                 re-seals every stored secret under the current key;
                                 --new-key first adds a new current key to the key file
                                 (SECRETS_KEY_FILE or DATA_DIR/secrets.key); --forget-previous
                                 then drops the older keys from it (restart every process first)

MCP (AI agents):
  mcp                            MCP server on stdio, relaying to a running API's /mcp:
                                 MEDIASVC_URL (default http://127.0.0.1:8080), MEDIASVC_API_KEY

Settings come from the environment (PORT, DATA_DIR, PUBLIC_BASE_URL, DATABASE_URL,
TEMPORAL_ADDRESS, DOWNLOAD_URL_TTL_MINUTES, ALLOW_PRIVATE_NETWORK, ...); see README.md.
`;

class UsageError extends Error {}

const HELP_WORDS = new Set(['--help', '-h', 'help']);

function parsePlan(raw: string | undefined): PlanName {
  const plan = need(raw, '--plan') as PlanName;
  if (!PLAN_NAMES.includes(plan)) throw new UsageError(`unknown plan ${plan}; plans are ${PLAN_NAMES.join(', ')}`);
  return plan;
}

/** `--add -5` → `--add=-5`: parseArgs reads a value that starts with a dash as another option. */
function joinNegativeValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const next = args[i + 1];
    if (args[i]!.startsWith('--') && !args[i]!.includes('=') && next !== undefined && /^-\d+$/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else out.push(args[i]!);
  }
  return out;
}

async function loadAccount(em: EntityManager, id: string | undefined): Promise<Account> {
  const accountId = need(id, 'ACCOUNT');
  return em.findOneOrFail(Account, accountId, { failHandler: () => new UsageError(`account ${accountId} does not exist`) });
}

function need<T>(v: T | undefined, what: string): T {
  if (v === undefined || v === '') throw new UsageError(`missing ${what}`);
  return v;
}

async function withOrm<T>(config: Config, fn: (orm: MikroORM) => Promise<T>): Promise<T> {
  const orm = await openOrm(config, { migrate: true, warn: (msg) => log.warn(msg) });
  try {
    return await fn(orm);
  } finally {
    await orm.close();
  }
}

async function rotateSecrets(config: Config, sub: string | undefined, opts: { newKey: boolean; forgetPrevious: boolean }): Promise<void> {
  if (sub !== 'rotate') throw new UsageError(`unknown secrets command ${sub ?? ''}`);
  const s = config.secrets;
  if (s.key && (opts.newKey || opts.forgetPrevious)) {
    throw new UsageError('SECRETS_KEY is set, so the key is yours to change: give every process the new key in SECRETS_KEY and the old one in SECRETS_PREVIOUS_KEYS, restart them, run `secrets rotate`, then remove SECRETS_PREVIOUS_KEYS');
  }
  if (opts.newKey) {
    loadSecretBox(s, (msg) => log.warn(msg)); // creates the development key file if there is none yet
    writeKeyFile(s.keyFile, [newSecretKeyText(), ...readKeyFile(s.keyFile)]);
  }
  await withOrm(config, async (orm) => {
    const counts = await resealStoredSecrets(orm.em.fork());
    const keyId = secretBoxOf(orm.em).current.id;
    if (opts.forgetPrevious) writeKeyFile(s.keyFile, readKeyFile(s.keyFile).slice(0, 1));
    console.log(`stored secrets now sealed under key ${keyId}: ${counts.rekeyed} re-sealed from a previous key, ${counts.sealed} sealed from plaintext, ${counts.current} already current${opts.forgetPrevious ? '; previous keys removed from the key file' : ''}`);
  });
}

function parseQueues(raw: string | undefined): TaskQueue[] {
  const list = need(raw, '--queues').split(',').map((q) => q.trim()).filter(Boolean);
  for (const q of list) if (!isTaskQueue(q)) throw new UsageError(`unknown queue ${q}; queues are ${TASK_QUEUES.join(', ')}`);
  return list as TaskQueue[];
}

/**
 * Resolves on the first SIGINT/SIGTERM. A later SIGTERM does not cut the graceful stop short (a worker
 * process gets one from its process group and one from serve); a second SIGINT (Ctrl-C) still does.
 */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.on('SIGTERM', () => resolve('SIGTERM'));
  });
}

async function serve(config: Config, withApi: boolean, queues: TaskQueue[]): Promise<void> {
  // the service itself (API, workers, Temporal) is loaded only here: the operator commands start in a third of the time
  const [{ startApi, startMetricsServer, startWorkerProcess, startWorkers, stopWithParent, temporalAddress }, { QUEUE_TABLE }] = await Promise.all([import('./runtime'), import('../workers/queues')]);
  // Everything started is stopped in reverse order, on a signal or when start-up fails half way.
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => log.error({ err }, 'error while stopping'));
  };
  try {
    const heapTrim = startHeapTrim(config.mallocTrimIntervalMs);
    stops.push(async () => heapTrim.stop());
    const metrics = await startMetricsServer(config);
    if (metrics) stops.push(() => metrics.close());
    const embedded = withApi && queues.length === TASK_QUEUES.length;
    const { address, dev } = embedded ? await temporalAddress(config) : { address: need(config.temporalAddress, 'TEMPORAL_ADDRESS'), dev: null };
    if (dev) stops.push(() => dev.stop());
    const orm = await openOrm(config, { migrate: true, warn: (msg) => log.warn(msg) });
    // buffered key usage and rate-limit counts are written before the database closes
    stops.push(async () => {
      await closeKeyUsage(orm.em);
      await rateLimitsWritten(orm.em);
      await orm.close();
    });
    // serve: the queues that need no database (those that run tools) in a worker process of their own
    const toolQueues = embedded && config.serveToolWorkers === 'process' ? queues.filter((q) => !QUEUE_TABLE[q].needsDatabase) : [];
    const inline = queues.filter((q) => !toolQueues.includes(q));
    const needsOrm = withApi || inline.some((q) => QUEUE_TABLE[q].needsDatabase);
    if (!withApi) stopWithParent();
    const workers = inline.length ? await startWorkers(config, inline, address, needsOrm ? orm : undefined) : null;
    if (workers) stops.push(() => workers.stop());
    const toolWorkers = toolQueues.length ? startWorkerProcess(toolQueues, address, oneArena) : null;
    if (toolWorkers) stops.push(() => toolWorkers.stop());
    const api = withApi ? await startApi(config, orm, address) : null;
    if (api) stops.push(() => api.close());
    const parts = [
      api && `API on http://${config.host}:${config.port}`,
      workers && `workers for ${inline.join(', ')}`,
      toolWorkers && `a worker process for ${toolQueues.join(', ')}`,
      dev && `Temporal dev server on ${dev.address} (UI http://127.0.0.1:${config.temporalUiPort})`,
      metrics && `metrics on http://${config.metricsHost}:${config.metricsPort}/metrics`,
    ].filter(Boolean);
    log.info({ data_dir: config.dataDir }, `mediasvc ready: ${parts.join('; ')}; data in ${config.dataDir}`);
    const never = new Promise<string>(() => undefined);
    // a dev server that cannot be started again stops everything, with its reason as serve's last line
    const sig = await Promise.race([untilSignal(), workers?.done.then(() => 'workers stopped') ?? never, toolWorkers?.done.then(() => 'the worker process stopped') ?? never, dev?.gaveUp ?? never]);
    log.info(`mediasvc stopping (${sig})`);
  } finally {
    await stopAll();
  }
  log.info('mediasvc stopped');
}

const SUBCOMMANDS = new Set(['accounts', 'keys', 'secrets', 'cookies', 'tools', 'storage']);

/** `cookies set|list|delete`: a site's cookies for yt-dlp, sealed in COOKIES_DIR; values are never printed. */
function siteCookies(config: Config, sub: string | undefined, required: (v: string | undefined, what: string) => string, site: string | undefined, file: string | undefined): void {
  const store = processCookieStore(config);
  const when = (d: Date | null) => (d ? d.toISOString() : 'session');
  try {
    if (sub === 'set') {
      const path = required(file, 'FILE');
      const text = path === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(path, 'utf8');
      const s = store.set(required(site, '--site'), text);
      console.log(`stored ${s.cookies} cookies for ${s.site} (earliest expiry ${when(s.expiresAt)})${s.dropped ? `; left out ${s.dropped} for other sites` : ''}`);
    } else if (sub === 'list') {
      for (const s of store.list()) console.log([s.site, `${s.cookies} cookies`, `expires ${when(s.expiresAt)}`, `updated ${s.updatedAt.toISOString()}`].join('\t'));
    } else if (sub === 'delete') {
      const name = required(site, '--site');
      console.log(store.delete(name) ? `cookies for ${name} deleted` : `no cookies stored for ${name}`);
    } else {
      throw new UsageError(`unknown cookies command ${sub ?? ''}`);
    }
  } catch (err) {
    if (err instanceof CookieFileError) throw new UsageError(err.message);
    throw err;
  }
}

/** `tools yt-dlp update|rollback|status`: yt-dlp versions without a release; an update that fails its self-check exits 1, the old version still in use. */
async function ytdlpTool(config: Config, action: string | undefined, version: string | undefined): Promise<void> {
  const [{ currentYtdlpReport }, { ejsStatus, rollbackYtdlp, updateYtdlp, YtdlpUpdateError }] = await Promise.all([import('../engines/ytdlp/report'), import('../engines/ytdlp/versions')]);
  try {
    if (action === 'update') {
      const out = await updateYtdlp(config, version, (line) => console.log(line));
      if (out.rolledBack) {
        console.log(`yt-dlp ${out.to} failed its self-check; still using ${out.rolledBack.kept}: ${out.rolledBack.reason}`);
        process.exitCode = 1;
      } else {
        console.log(out.from === out.to ? `yt-dlp ${out.to} is already in use` : `yt-dlp ${out.from} -> ${out.to}: the next step uses it`);
      }
    } else if (action === 'rollback') {
      const out = rollbackYtdlp(config);
      console.log(`yt-dlp ${out.from} -> ${out.to}: the next step uses it`);
    } else if (action === 'status') {
      const now = currentYtdlp(config);
      console.log([`yt-dlp ${now.version}`, now.managed ? `installed in ${config.ytdlpToolsDir}` : `from ${config.ytdlpPath}`, `earlier: ${now.previous.join(', ') || 'none'}`].join('\t'));
      // yt-dlp's own words, from its --verbose report for the service's command line
      const [report, ejs] = await Promise.all([currentYtdlpReport(config), ejsStatus(config, now.binary)]);
      for (const line of [report.lines.jsRuntimes, report.lines.jsChallengeProviders, report.lines.poTokenProviders]) if (line) console.log(line);
      console.log(`JS runtime in use: ${report.runtime ? `${report.runtime.name} ${report.runtime.version ?? ''}`.trim() + (report.runtime.supported && report.solves ? '' : ' (yt-dlp cannot solve JS challenges with it)') : 'none (YouTube formats will be missing)'}`);
      console.log(`yt-dlp-ejs: ${ejs.has ?? 'none'}${ejs.expects ? ` (yt-dlp expects ${ejs.expects}${ejs.usable === false || ejs.has === null ? ': it would ignore this one' : ''})` : ''}`);
      if (report.error) console.log(`report: ${report.error}`);
    } else {
      throw new UsageError(`unknown yt-dlp action ${action ?? ''}: update [--version V], rollback or status`);
    }
  } catch (err) {
    if (err instanceof YtdlpUpdateError) throw new UsageError(err.message);
    throw err;
  }
}

async function main(argv: string[]): Promise<void> {
  const [cmd, sub, ...rest] = argv;
  const config = loadConfig();
  setLogLevel(config.logLevel);
  const { values, positionals } = parseArgs({
    args: joinNegativeValues(SUBCOMMANDS.has(cmd ?? '') ? rest : argv.slice(1)),
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      add: { type: 'string' },
      account: { type: 'string' },
      queues: { type: 'string' },
      rotate: { type: 'boolean' },
      email: { type: 'string' },
      site: { type: 'string' },
      version: { type: 'string' },
      'new-key': { type: 'boolean' },
      'forget-previous': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (!cmd || HELP_WORDS.has(cmd) || values.help || (SUBCOMMANDS.has(cmd) && (sub === undefined || HELP_WORDS.has(sub)))) {
    process.stdout.write(HELP);
    return;
  }

  switch (cmd) {
    case 'serve':
      return serve(config, true, [...TASK_QUEUES]);
    case 'api':
      return serve(config, true, []);
    case 'worker':
      return serve(config, false, parseQueues(values.queues));
    case 'mcp':
      // loaded only here: the stdio bridge talks HTTP to the API and needs nothing else of the CLI
      return (await import('../api/mcp/stdio-bridge')).runStdioBridge();
    case 'migrate':
      await withOrm(config, async () => undefined);
      console.log('migrations applied');
      return;
    case 'accounts':
      return withOrm(config, async (orm) => {
        const em = orm.em.fork();
        if (sub === 'create') {
          const plan = parsePlan(values.plan);
          const problem = values.email === undefined ? null : await ownerEmailProblem(em, values.email, null);
          if (problem) throw new UsageError(problem);
          const account = await createAccount(em, need(values.name, '--name'), plan);
          if (values.email !== undefined) await setOwnerEmail(em, account.id, need(values.email, '--email'));
          console.log(`created account "${account.name}" on plan ${plan} with ${await currentBalance(em, account.id)} credits${values.email ? `, owner ${values.email}` : ''}`);
          console.log(account.id);
        } else if (sub === 'list') {
          for (const a of await em.find(Account, {}, { orderBy: { createdAt: 'asc' } })) {
            console.log([a.id, a.name, a.plan, `${await currentBalance(em, a.id)} credits`, a.createdAt.toISOString()].join('\t'));
          }
        } else if (sub === 'credits') {
          const { id } = await loadAccount(em, positionals[0]);
          const add = values.add === undefined ? 0 : Number(values.add);
          if (!/^-?\d+$/.test(values.add ?? '0') || !Number.isSafeInteger(add)) throw new UsageError('--add takes an integer, e.g. --add 100 or --add -5');
          console.log(add ? await adjustCredits(em, id, add, 'operator adjustment') : await currentBalance(em, id));
        } else if (sub === 'plan') {
          const account = await setPlan(em, (await loadAccount(em, positionals[0])).id, parsePlan(values.plan));
          const plan = PLANS[account.plan];
          console.log(`account ${account.id} is on plan ${account.plan}: ${plan.requestsPerMinute} requests per minute, ${plan.monthlyCredits} credits from the next top-up`);
        } else if (sub === 'webhook-secret') {
          const account = await loadAccount(em, positionals[0]);
          console.log(values.rotate ? await rotateWebhookSecret(em, account.id) : account.webhookSecret);
        } else if (sub === 'login-link') {
          const account = await loadAccount(em, positionals[0]);
          const { issueLoginLink } = await import('../api/dashboard/auth.service');
          const { url, expiresAt } = await issueLoginLink(em, config, account.id);
          console.log(`one-time sign-in link for "${account.name}", valid until ${expiresAt.toISOString()}:`);
          console.log(url);
        } else if (sub === 'owner') {
          const account = await loadAccount(em, positionals[0]);
          const owner = values.email !== undefined ? await setOwnerEmail(em, account.id, need(values.email, '--email')) : await findOwner(em, account.id);
          console.log(owner?.email ?? 'no owner email set');
        } else {
          throw new UsageError(`unknown accounts command ${sub ?? ''}`);
        }
      });
    case 'keys':
      return withOrm(config, async (orm) => {
        const em = orm.em.fork();
        if (sub === 'create') {
          const { key, record } = await createApiKey(em, need(values.account, '--account'), need(values.name, '--name'));
          console.log(`created key ${record.id} ("${record.name}"); store it now, it is not shown again:`);
          console.log(key);
        } else if (sub === 'list') {
          const keys = await em.find(ApiKey, { accountId: need(values.account, '--account') }, { orderBy: { createdAt: 'asc' } });
          for (const k of keys) {
            console.log([k.id, k.prefix, k.name, k.isActive ? 'active' : 'inactive', k.createdAt.toISOString(), k.lastUsedAt?.toISOString() ?? 'never'].join('\t'));
          }
        } else if (sub === 'deactivate' || sub === 'activate') {
          const k = await setKeyActive(em, need(positionals[0], 'KEY_ID'), sub === 'activate');
          console.log(`key ${k.id} is ${k.isActive ? 'active' : 'inactive'}`);
        } else if (sub === 'delete') {
          await deleteKey(em, need(positionals[0], 'KEY_ID'));
          console.log(`key ${positionals[0]} deleted`);
        } else {
          throw new UsageError(`unknown keys command ${sub ?? ''}`);
        }
      });
    case 'tools':
      if (sub !== 'yt-dlp') throw new UsageError(`unknown tool ${sub ?? ''}: tools yt-dlp update|rollback|status`);
      return ytdlpTool(config, positionals[0], values.version);
    case 'storage':
      if (sub !== 'create-bucket') throw new UsageError(`unknown storage command ${sub ?? ''}: storage create-bucket`);
      console.log(await (await import('../engines/open-storage')).createBucket(config));
      return;
    case 'cookies':
      return siteCookies(config, sub, need, values.site, positionals[0]);
    case 'secrets':
      return rotateSecrets(config, sub, { newKey: values['new-key'] === true, forgetPrevious: values['forget-previous'] === true });
    default:
      throw new UsageError(`unknown command ${cmd}`);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`mediasvc: ${err.message}\nRun 'bin/mediasvc --help' for usage.`);
      process.exit(2);
    }
    console.error(`mediasvc: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
