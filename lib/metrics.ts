// The service's Prometheus metrics (prom-client), one registry per process: the API serves it at
// GET /metrics (METRICS_TOKEN) and every process on METRICS_PORT. Worker-side counters (jobs ended,
// refunds, webhook deliveries) live in the process that runs the control queue.
import client from 'prom-client';
import { diskSpace, type DiskSpace } from './disk-space';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'mediasvc_process_' });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const JOB_SECONDS = [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200];

export const httpRequests = new client.Counter({ name: 'mediasvc_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'] as const, registers: [registry] });
export const httpDuration = new client.Histogram({ name: 'mediasvc_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method and route pattern', labelNames: ['method', 'route'] as const, buckets: SECONDS, registers: [registry] });

export const jobsCreated = new client.Counter({ name: 'mediasvc_jobs_created_total', help: 'Jobs accepted (202), by type', labelNames: ['type'] as const, registers: [registry] });
export const jobsCompleted = new client.Counter({ name: 'mediasvc_jobs_completed_total', help: 'Jobs that completed, by type', labelNames: ['type'] as const, registers: [registry] });
export const jobsFailed = new client.Counter({ name: 'mediasvc_jobs_failed_total', help: "Jobs that failed (and were refunded), by type and failure kind (the user's: unsupported, unavailable, rejected; the service's: tool, dependency, internal, timeout; cancelled)", labelNames: ['type', 'kind'] as const, registers: [registry] });
export const jobDuration = new client.Histogram({ name: 'mediasvc_job_duration_seconds', help: 'From creation to completion or failure, by type and final status', labelNames: ['type', 'status'] as const, buckets: JOB_SECONDS, registers: [registry] });

export const creditsCharged = new client.Counter({ name: 'mediasvc_credits_charged_total', help: 'Credits charged, by what for (a job type, or info)', labelNames: ['for'] as const, registers: [registry] });
export const creditsRefunded = new client.Counter({ name: 'mediasvc_credits_refunded_total', help: 'Credits refunded for failed jobs, by job type', labelNames: ['for'] as const, registers: [registry] });

export const webhookDeliveries = new client.Counter({ name: 'mediasvc_webhook_delivery_attempts_total', help: 'Webhook delivery attempts, by event and outcome: delivered, retry (another attempt is scheduled), exhausted (the last attempt failed), failed (410 Gone or the endpoint was deleted)', labelNames: ['event', 'outcome'] as const, registers: [registry] });
export const webhookLatency = new client.Histogram({ name: 'mediasvc_webhook_delivery_seconds', help: 'Time a receiver took to answer a delivery attempt', labelNames: ['event'] as const, buckets: SECONDS, registers: [registry] });

/**
 * A gauge read at scrape time from a source that only some processes have (Temporal, the database):
 * empty until that process sets its reader; a failed read leaves it empty rather than failing the scrape.
 */
function readGauge<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  let reader: (() => Promise<{ labels: Record<L, string>; value: number }[]>) | null = null;
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      if (!reader) return;
      this.reset();
      for (const row of await reader().catch(() => [])) this.set(row.labels, row.value);
    },
  });
  return (read: NonNullable<typeof reader>): void => {
    reader = read;
  };
}

const setBacklogRows = readGauge('mediasvc_queue_backlog', 'Tasks waiting on each Temporal task queue (approximate, from the server), by queue and kind', ['queue', 'kind'] as const);
/** Where the queue backlog gauge reads from (Temporal's task queue stats); set by a process with a Temporal client. */
export function setBacklogReader(read: () => Promise<{ queue: string; kind: 'workflow' | 'activity'; backlog: number }[]>): void {
  setBacklogRows(async () => (await read()).map((r) => ({ labels: { queue: r.queue, kind: r.kind }, value: r.backlog })));
}

const setJobsByPlanRows = readGauge(
  'mediasvc_jobs_in_flight',
  "Jobs processing (running) and pending (queued: waiting for one of their account's running slots, or about to start), by plan",
  ['plan', 'state'] as const,
);
/** Where the per-plan job gauge reads from (the database); set by a process that has it. */
export function setJobsByPlanReader(read: () => Promise<{ plan: string; status: string; count: number }[]>): void {
  setJobsByPlanRows(async () => (await read()).map((r) => ({ labels: { plan: r.plan, state: r.status === 'processing' ? 'running' : 'queued' }, value: r.count })));
}

const setBreakerRows = readGauge('mediasvc_platform_breaker_open', "1 for each platform whose circuit breaker is open (it refuses the service: its jobs wait, pending)", ['platform'] as const);
/** Where the platform breaker gauge reads from (the database); set by a process that has it. */
export function setPlatformBreakerReader(read: () => Promise<{ platform: string }[]>): void {
  setBreakerRows(async () => (await read()).map((r) => ({ labels: { platform: r.platform }, value: 1 })));
}

const setYtdlpRows = readGauge('mediasvc_ytdlp_info', 'The yt-dlp version new steps use (1), from mediasvc tools yt-dlp update or YTDLP_PATH', ['version'] as const);
/** Where the yt-dlp version gauge reads from. */
export function setYtdlpVersionReader(read: () => string): void {
  setYtdlpRows(async () => [{ labels: { version: read() }, value: 1 }]);
}

/** What yt-dlp warned about (engines/ytdlp/warnings.ts maps its texts): a JS runtime or challenge solver missing, SABR-only formats, formats missing, PO tokens. */
export const YTDLP_WARNING_KINDS = ['no_js_runtime', 'sabr_only', 'formats_missing', 'po_token', 'other'] as const;
export type YtdlpWarningKind = (typeof YTDLP_WARNING_KINDS)[number];
const ytdlpWarnings = new client.Counter({ name: 'mediasvc_ytdlp_warnings_total', help: "yt-dlp's WARNING lines, each distinct one once per run, by kind: no_js_runtime (no JS runtime, or challenge solving failed), sabr_only, formats_missing, po_token, other", labelNames: ['kind'] as const, registers: [registry] });
// every kind from the start, so a rate over it is 0 rather than absent
for (const kind of YTDLP_WARNING_KINDS) ytdlpWarnings.inc({ kind }, 0);

/** A counter a process without a metrics listener of its own (serve's tool worker process) hands to the one that serves them. */
export interface ForwardedMetric {
  metric: 'ytdlp_warning';
  kind: YtdlpWarningKind;
}
let forwardTo: ((m: ForwardedMetric) => void) | null = null;

/** Counts one yt-dlp warning here, or in the process this one forwards its counters to. */
export function countYtdlpWarning(kind: YtdlpWarningKind): void {
  if (forwardTo) forwardTo({ metric: 'ytdlp_warning', kind });
  else ytdlpWarnings.inc({ kind });
}

/** From now on this process's forwarded counters go to `send` (its parent's registry) instead of its own. */
export function forwardMetrics(send: (m: ForwardedMetric) => void): void {
  forwardTo = send;
}

/** Records a counter a child process forwarded; anything else is ignored. */
export function recordForwardedMetric(m: unknown): void {
  const f = m as Partial<ForwardedMetric> | null;
  if (f?.metric === 'ytdlp_warning' && YTDLP_WARNING_KINDS.includes(f.kind as YtdlpWarningKind)) ytdlpWarnings.inc({ kind: f.kind! });
}

const setDiskRows = readGauge('mediasvc_disk_free_bytes', 'Free space under DATA_DIR, bytes', [] as const);
const setDiskLowRows = readGauge('mediasvc_disk_low', '1 while free space under DATA_DIR is below MIN_FREE_DISK_MB (new steps wait), else 0', [] as const);
/** The disk gauges of a process that writes under DATA_DIR. */
export function setDiskReader(dir: string, minFreeBytes: number): void {
  const rows = (value: (space: DiskSpace) => number) => async () => {
    const space = diskSpace(dir, minFreeBytes);
    return space ? [{ labels: {}, value: value(space) }] : [];
  };
  setDiskRows(rows((space) => space.freeBytes));
  setDiskLowRows(rows((space) => (space.low ? 1 : 0)));
}

/** The Prometheus text exposition of this process's metrics. */
export function metricsText(): Promise<string> {
  return registry.metrics();
}
export const METRICS_CONTENT_TYPE = registry.contentType;
