// Which paths the per-key (or per-IP) rate limit does not count (docs/api.md, rate limits: health, the OpenAPI
// document; result files are limited per link; the dashboard has its own sign-in limits).
const UNMETERED_EXACT = new Set(['/healthz', '/readyz', '/metrics', '/v1/openapi.json']);
const UNMETERED_PREFIXES = ['/v1/files/', '/dashboard'];

export function isUnmetered(path: string): boolean {
  return UNMETERED_EXACT.has(path) || UNMETERED_PREFIXES.some((p) => path.startsWith(p));
}
