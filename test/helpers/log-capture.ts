// The service logger's warn lines, caught in the test's own process while `run` runs (in-process
// engines and activities log through lib/logger's one pino instance).
import { log } from '../../lib/logger';

export interface CapturedLine {
  fields: Record<string, unknown>;
  msg: string;
}

export async function captureWarnings<T>(run: () => Promise<T>): Promise<{ result: T | undefined; error: unknown; lines: CapturedLine[] }> {
  const lines: CapturedLine[] = [];
  const original = log.warn;
  log.warn = ((first: unknown, ...rest: unknown[]) => {
    if (typeof first === 'string') lines.push({ fields: {}, msg: first });
    else lines.push({ fields: (first ?? {}) as Record<string, unknown>, msg: typeof rest[0] === 'string' ? rest[0] : '' });
  }) as typeof log.warn;
  try {
    return { result: await run(), error: undefined, lines };
  } catch (error) {
    return { result: undefined, error, lines };
  } finally {
    log.warn = original;
  }
}
