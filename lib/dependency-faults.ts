// Recognises the errors a dependency raises while it is down or full (the database, Temporal, the
// bucket, the local disk), so that callers answer 503 with Retry-After and retry later, instead of
// treating them as the service's own faults.

export type Dependency = 'database' | 'temporal' | 'storage' | 'disk';

export interface DependencyFault {
  dependency: Dependency;
  /** A short reason for logs and /readyz; never a path or a credential. */
  reason: string;
}

/** Disk errors of Node's fs and of SQLite: the volume is full or read-only. */
const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC', 'SQLITE_CANTOPEN', 'SQLITE_READONLY']);
/** Connection-level errors of the PostgreSQL driver and Node's sockets. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs of a server that is shutting down, starting up or out of connections. */
const PG_UNAVAILABLE = /^(57P0[1-3]|08\d{3}|53300|53100)$/;
const PG_MESSAGE = /Connection terminated|terminating connection|the database system is (starting up|shutting down|in recovery mode)|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended unexpectedly/i;
/** gRPC status codes of a Temporal frontend that cannot be reached (UNAVAILABLE, DEADLINE_EXCEEDED). */
const GRPC_UNAVAILABLE = new Set([14, 4]);

function fieldsOf(err: unknown): { code?: unknown; errno?: unknown; name?: unknown; message?: unknown; cause?: unknown; $metadata?: { httpStatusCode?: number } } {
  return typeof err === 'object' && err !== null ? (err as never) : {};
}

/** The dependency behind an error, following `cause` chains; null for anything else. */
export function dependencyFault(err: unknown, depth = 0): DependencyFault | null {
  if (depth > 5 || typeof err !== 'object' || err === null) return null;
  const e = fieldsOf(err);
  const code = typeof e.code === 'string' ? e.code : typeof e.code === 'number' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  const name = typeof e.name === 'string' ? e.name : '';
  if (typeof code === 'string' && DISK_CODES.has(code)) return { dependency: 'disk', reason: code === 'ENOSPC' || code === 'SQLITE_FULL' ? 'the disk is full' : `the disk refused a write (${code})` };
  if (/database or disk is full|no space left on device/i.test(message)) return { dependency: 'disk', reason: 'the disk is full' };
  if (typeof code === 'string' && PG_UNAVAILABLE.test(code)) return { dependency: 'database', reason: `the database is not accepting connections (${code})` };
  if (PG_MESSAGE.test(message) || /ConnectionException/.test(name)) return { dependency: 'database', reason: 'the database connection failed' };
  // Temporal's client errors carry gRPC codes; its ServiceError wraps them in `cause`
  if (typeof code === 'number' && GRPC_UNAVAILABLE.has(code) && /grpc|unavailable|deadline|connect|No connection established/i.test(`${name} ${message}`)) return { dependency: 'temporal', reason: 'Temporal is not reachable' };
  if (/^(ServiceError|TransportError)$/.test(name) && /UNAVAILABLE|DEADLINE_EXCEEDED|connect/i.test(message)) return { dependency: 'temporal', reason: 'Temporal is not reachable' };
  // the AWS SDK (its errors, network ones included, carry $metadata): a 5xx from the bucket, or no answer at all
  const httpStatus = e.$metadata?.httpStatusCode;
  if (e.$metadata && (httpStatus === undefined || httpStatus >= 500)) return { dependency: 'storage', reason: `the bucket did not answer${httpStatus ? ` (${httpStatus})` : ''}` };
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) {
    return dependencyFault(e.cause, depth + 1) ?? { dependency: 'database', reason: `a connection failed (${code})` };
  }
  return dependencyFault(e.cause, depth + 1);
}

/** What a client is told while a dependency is down: a sentence to act on, with no internals. */
export function unavailableDetail(fault: DependencyFault): string {
  const what = { database: "the service's database", temporal: 'the job scheduler', storage: 'the file store', disk: "the server's storage" }[fault.dependency];
  return `The request could not be completed because ${what} is unavailable for the moment (${fault.reason}). Retry after the time in Retry-After; a create retried with the same Idempotency-Key is never charged twice.`;
}

/** Seconds a client is asked to wait before retrying after a dependency fault. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;
