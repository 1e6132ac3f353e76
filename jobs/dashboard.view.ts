import type { Comment, Reply } from '../engines/comments/provider';
import { JOB_STATUSES } from './types';
import { JOB_TYPES } from '../operations/registry';
import type { StoredFailureKind } from '../lib/job-failure';
import { formatBytes } from '../lib/plans';
import type { JobResource } from './service';
import { html, queryString, safeHref, type Html } from '../api/dashboard/html';
import { MAX_INLINE_COMMENTS, type JobOutputView, type Segment } from '../operations/output-view';
import { dataTable, dateTime, pager, postButton, statusBadge, type PageContext } from '../api/dashboard/views/layout';

export interface JobFilterValues {
  status?: string;
  job_type?: string;
}

function filterForm(filter: JobFilterValues): Html {
  const select = (id: string, label: string, values: readonly string[], chosen: string | undefined) => html`<div class="field">
<label for="${id}">${label}</label>
<select id="${id}" name="${id}"><option value="">All</option>${values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${v}</option>`)}</select></div>`;
  return html`<form method="get" action="/dashboard/jobs" class="filters" role="search" aria-label="Filter jobs">
${select('status', 'Status', JOB_STATUSES, filter.status)}
${select('job_type', 'Type', JOB_TYPES, filter.job_type)}
<button type="submit" class="button-secondary">Apply filters</button>
</form>`;
}

/** Where a progress value is shown: a <progress> element with its number as text. */
function progressBar(job: JobResource): Html {
  const value = job.progress ?? 0;
  return html`<progress max="100" value="${value}" aria-label="Progress of job ${job.job_id.slice(0, 8)}">${value}%</progress>`;
}

export function jobsListView(page: PageContext, data: { jobs: JobResource[]; nextCursor: string | null; filter: JobFilterValues; cursor: string | undefined }): Html {
  return html`<div class="toolbar">${filterForm(data.filter)}<a href="/dashboard/jobs/new" class="button-primary">New job</a></div>
${dataTable({
  caption: 'Jobs, newest first',
  captionHidden: true,
  columns: [
    { label: 'Job', cell: (j: JobResource) => html`<a href="/dashboard/jobs/${j.job_id}"><code>${j.job_id.slice(0, 8)}</code></a>` },
    { label: 'Type', cell: (j) => j.job_type },
    { label: 'Status', cell: (j) => html`${statusBadge(j.status)}${j.status === 'processing' ? html` ${progressBar(j)}` : ''}` },
    { label: 'Source', cell: (j) => html`<span class="truncate" title="${j.source_url}">${j.source_url}</span>` },
    { label: 'Credits', className: 'num', cell: (j) => j.credits_charged },
    { label: 'Created', cell: (j) => dateTime(j.created_at) },
  ],
  rows: data.jobs,
  empty: data.filter.status || data.filter.job_type ? 'No jobs match these filters.' : html`No jobs yet. <a href="/dashboard/jobs/new">Start one</a>.`,
})}
${pager({
  label: 'Job pages',
  firstHref: data.cursor ? `/dashboard/jobs${queryString({ ...data.filter })}` : null,
  nextHref: data.nextCursor ? `/dashboard/jobs${queryString({ ...data.filter, cursor: data.nextCursor })}` : null,
})}`;
}

/** `75.5` → `01:15.5` */
function clock(seconds: number | null): string {
  if (seconds === null) return '';
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${String(m).padStart(2, '0')}:${s.toFixed(1).padStart(4, '0')}`;
}

function span(s: Segment): Html {
  return s.start === null ? html`—` : html`<time>${clock(s.start)}</time>–<time>${clock(s.end)}</time>`;
}

function replyItem(r: Reply, extra: { pinned?: boolean; replies?: Html } = {}): Html {
  return html`<li class="comment"><p class="comment-meta"><strong>${r.author || 'unknown'}</strong> · ${dateTime(r.timestamp)} · ${r.like_count} like${r.like_count === 1 ? '' : 's'}${
    extra.pinned ? html` <span class="badge badge-pinned">pinned</span>` : ''
  }</p>
<p class="comment-text">${r.text}</p>${extra.replies ?? ''}</li>`;
}

function commentItem(c: Comment): Html {
  const replies = c.replies.length ? html`<ol class="replies" aria-label="${c.replies.length} replies to ${c.author}">${c.replies.map((r) => replyItem(r))}</ol>` : html``;
  return replyItem(c, { pinned: c.is_pinned, replies });
}

export function outputView(output: JobOutputView, job: JobResource): Html {
  switch (output.kind) {
    case 'none':
      return html``;
    case 'unavailable':
      return html`<p class="empty">${output.reason}</p>`;
    case 'image':
      return html`<img class="output-media" src="${safeHref(output.url)}" alt="${output.animated ? 'Animated GIF preview' : 'Preview image'} of ${job.source_url}"${
        output.width ? html` width="${output.width}"` : ''
      }${output.height ? html` height="${output.height}"` : ''} data-testid="job-output-image">`;
    case 'video':
      return html`<video class="output-media" controls preload="metadata" src="${safeHref(output.url)}"${output.width ? html` width="${output.width}"` : ''}${
        output.height ? html` height="${output.height}"` : ''
      } data-testid="job-output-video">Your browser cannot play this video; use the download link.</video>`;
    case 'audio':
      return html`<audio controls preload="none" src="${safeHref(output.url)}" data-testid="job-output-audio">Your browser cannot play this audio; use the download link.</audio>`;
    case 'transcript': {
      const speakers = speakerColours(output.segments);
      return html`<p>Language: <strong>${output.language ?? 'unknown'}</strong>${speakers.size ? html`; ${speakers.size} speaker${speakers.size === 1 ? '' : 's'}` : ''}</p>
<div class="table-scroll"><table class="data transcript" data-testid="transcript"><caption class="visually-hidden">Transcript with timestamps${speakers.size ? ' and speakers' : ''}</caption>
<thead><tr><th scope="col">Time</th>${speakers.size ? html`<th scope="col">Speaker</th>` : ''}<th scope="col">Text</th></tr></thead>
<tbody>${output.segments.map((s) => html`<tr><td class="nowrap">${span(s)}</td>${speakers.size ? speakerCell(s, speakers) : ''}<td>${s.text}</td></tr>`)}</tbody></table></div>`;
    }
    case 'translation': {
      const speakers = speakerColours(output.segments);
      return html`<div class="table-scroll"><table class="data side-by-side" data-testid="translation"><caption class="visually-hidden">Original and translation side by side</caption>
<thead><tr><th scope="col">Time</th>${speakers.size ? html`<th scope="col">Speaker</th>` : ''}<th scope="col" lang="${output.sourceLanguage ?? ''}">Original (${output.sourceLanguage ?? '?'})</th><th scope="col">Translation (${output.targetLanguage ?? '?'})</th></tr></thead>
<tbody>${output.segments.map(
        (s) => html`<tr><td class="nowrap">${span(s)}</td>${speakers.size ? speakerCell(s, speakers) : ''}<td lang="${output.sourceLanguage ?? ''}">${s.original ?? ''}</td><td lang="${output.targetLanguage ?? ''}">${s.text}</td></tr>`,
      )}</tbody></table></div>`;
    }
    case 'comments':
      return html`<p>${output.topLevelTotal} top-level comment${output.topLevelTotal === 1 ? '' : 's'}${
        output.topLevelTotal > MAX_INLINE_COMMENTS ? html`; the first ${MAX_INLINE_COMMENTS} are shown, the file has them all` : ''
      }.</p>
<ol class="comments" data-testid="comments">${output.comments.map(commentItem)}</ol>`;
    case 'storyboard':
      return storyboardFigure(output);
    case 'figures':
      return html`<dl class="${output.code ? 'figures hashes' : 'figures'}">${output.figures.map(([k, v]) => html`<div><dt>${k}</dt><dd>${output.code ? html`<code>${v}</code>` : v}</dd></div>`)}</dl>`;
  }
}

/** A storyboard as its sprite, each tile outlined and labelled with the time it stands for (SVG: no inline styles under the page's policy). */
function storyboardFigure(sb: Extract<JobOutputView, { kind: 'storyboard' }>): Html {
  return html`<p>${sb.tiles.length} tiles, ${sb.tiles[0] ? `${sb.tiles[0].end - sb.tiles[0].start} s` : ''} apart.</p>
<figure class="storyboard"><svg viewBox="0 0 ${sb.width} ${sb.height}" width="${sb.width}" height="${sb.height}" role="img" aria-label="Storyboard sprite of ${sb.tiles.length} tiles" data-testid="storyboard">
<image href="${safeHref(sb.spriteUrl)}" x="0" y="0" width="${sb.width}" height="${sb.height}"/>
${sb.tiles.map((t) => html`<g class="tile"><rect x="${t.x}" y="${t.y}" width="${t.w}" height="${t.h}" class="tile-frame"/><rect x="${t.x}" y="${t.y + t.h - 16}" width="${Math.min(t.w, 44)}" height="16" class="tile-label"/><text x="${t.x + 3}" y="${t.y + t.h - 4}" class="tile-time">${clock(t.start)}</text></g>`)}
</svg><figcaption>Each tile is the frame shown while scrubbing from its time to the next tile's.</figcaption></figure>`;
}

/** Each speaker's colour (one of eight, in order of first speech). */
function speakerColours(segments: Segment[]): Map<string, number> {
  const colours = new Map<string, number>();
  for (const s of segments) if (s.speaker && !colours.has(s.speaker)) colours.set(s.speaker, colours.size % 8);
  return colours;
}

function speakerCell(s: Segment, colours: Map<string, number>): Html {
  return s.speaker ? html`<td class="nowrap"><span class="speaker speaker-${colours.get(s.speaker) ?? 0}" data-testid="speaker">${s.speaker}</span></td>` : html`<td></td>`;
}

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** What each failure kind means to the account, in a phrase. */
const FAILURE_KIND_TEXT: Record<StoredFailureKind, string> = {
  unsupported: 'The URL is not one the service can read',
  unavailable: 'The media was not available at the URL',
  rejected: 'The request did not fit the source',
  tool: 'A tool kept failing on this source',
  dependency: "The service's storage failed",
  internal: 'The service failed',
  timeout: 'A step took too long',
  cancelled: 'Cancelled',
};

export function jobView(page: PageContext, data: { job: JobResource; output: JobOutputView }): Html {
  const j = data.job;
  const running = j.status === 'pending' || j.status === 'processing';
  return html`<dl class="facts">
<div><dt>Status</dt><dd data-testid="job-status">${statusBadge(j.status)}</dd></div>
<div><dt>Type</dt><dd>${j.job_type}</dd></div>
<div><dt>Credits charged</dt><dd>${j.credits_charged}</dd></div>
<div><dt>Created</dt><dd>${dateTime(j.created_at)}</dd></div>
<div><dt>Finished</dt><dd>${dateTime(j.completed_at)}</dd></div>
<div class="wide"><dt>Source</dt><dd><a href="${safeHref(j.source_url)}" rel="noreferrer noopener" class="break">${j.source_url}</a></dd></div>
<div class="wide"><dt>Job id</dt><dd><code class="break">${j.job_id}</code></dd></div>
</dl>
${running
  ? html`<section class="card live" aria-labelledby="progress-h" data-job-status-url="/dashboard/jobs/${j.job_id}/status.json">
<h2 id="progress-h">Progress</h2>
<p><progress max="100" value="${j.progress ?? 0}" id="job-progress" aria-describedby="job-progress-text">${j.progress ?? 0}%</progress>
<span id="job-progress-text" role="status" aria-live="polite">${j.status}, ${j.progress ?? 0}%</span></p>
${postButton(page, `/dashboard/jobs/${j.job_id}/cancel`, 'Cancel job', { variant: 'danger' })}
</section>`
  : ''}
${j.error_message ? html`<div class="error-summary" role="alert"><h2>Error</h2><p data-testid="job-error">${j.error_message}</p>${j.failure_kind ? html`<p data-testid="job-failure-kind">${FAILURE_KIND_TEXT[j.failure_kind]} (<code>${j.failure_kind}</code>); the credits were refunded.</p>` : ''}</div>` : ''}
${j.status === 'completed'
  ? html`<section aria-labelledby="output-h"><h2 id="output-h">Output</h2>
${outputView(data.output, j)}
${j.download_url ? html`<p class="download"><a href="${safeHref(j.download_url)}" class="button-secondary" data-testid="download-link">Download the file</a> <span>Link expires ${dateTime(j.expires_at)}.</span></p>` : ''}
${j.files.length > 1 ? html`<ul class="files" data-testid="job-files">${j.files.map((f) => html`<li><a href="${safeHref(f.url)}">${f.name}</a> <span>${f.content_type}${f.size === null ? '' : `, ${formatBytes(f.size)}`}</span></li>`)}</ul>` : ''}
</section>`
  : ''}
${j.result_data ? html`<section aria-labelledby="result-h"><h2 id="result-h"><code>result_data</code></h2><pre class="json" tabindex="0">${pretty(j.result_data)}</pre></section>` : ''}
<section aria-labelledby="params-h"><h2 id="params-h">Parameters</h2><pre class="json" tabindex="0">${pretty(j.parameters)}</pre></section>
<p><a href="/dashboard/jobs">All jobs</a></p>`;
}
