// The service's one logger: JSON lines on stdout (pino), at LOG_LEVEL. Every process kind (API,
// workers, the embedded serve) writes through it, and Temporal's own logs are forwarded into it.
import pino from 'pino';

export type Logger = pino.Logger;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

function initialLevel(): LogLevel {
  const v = process.env.LOG_LEVEL;
  return v === 'debug' || v === 'warn' || v === 'error' ? v : 'info';
}

// stdout as pino writes it by default (asynchronously, flushed at exit), but a write that fails (a
// full disk under a redirected log) costs lines, never the process: up to 16 MB wait for the next write
const stdout = pino.destination({ dest: process.stdout.fd || 1, sync: false, maxLength: 16 * 2 ** 20 });
stdout.on('error', () => undefined);

export const log: Logger = pino({
  level: initialLevel(),
  base: { pid: process.pid },
  messageKey: 'msg',
  timestamp: pino.stdTimeFunctions.isoTime,
  // "level":"info" rather than 30: readable by people and log pipelines alike
  formatters: { level: (label) => ({ level: label }) },
  // stacks of real faults stay; errors are rendered with their type and message
  serializers: { err: pino.stdSerializers.err },
}, stdout);

/** Applies LOG_LEVEL from the validated config. */
export function setLogLevel(level: LogLevel): void {
  log.level = level;
}

/** A user's error (an unsupported URL, a refused address, a missing source) is one line: its type and message, no stack. */
export function userError(err: unknown): { type: string; message: string } {
  const e = err as { name?: string; type?: string; message?: string };
  return { type: e.type ?? e.name ?? 'Error', message: e.message ?? String(err) };
}
