// Small inline SVG bar charts, drawn on the server (no script, no external assets). Each chart is an
// image with a text alternative, and each bar has a <title> for pointer users.
import { html, type Html } from '../html';

const round = (n: number) => Math.round(n * 10) / 10;

/** A tiny bar chart of one series (e.g. requests per day of one key). */
export function sparkline(opts: { days: string[]; values: number[]; label: string; unit: string }): Html {
  const width = 150;
  const height = 32;
  const max = Math.max(1, ...opts.values);
  const step = width / opts.values.length;
  const total = opts.values.reduce((a, b) => a + b, 0);
  const bars = opts.values.map((v, i) => {
    const h = v === 0 ? 1 : Math.max(2, (v / max) * (height - 2));
    return html`<rect x="${round(i * step + 0.5)}" y="${round(height - h)}" width="${round(step - 1)}" height="${round(h)}" class="${v === 0 ? 'bar-zero' : 'bar'}"><title>${opts.days[i] ?? ''}: ${v} ${opts.unit}</title></rect>`;
  });
  const peak = Math.max(0, ...opts.values);
  const alt = `${opts.label}: ${total} ${opts.unit} in the last ${opts.values.length} days, at most ${peak} on one day`;
  return html`<svg class="sparkline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${alt}"><title>${alt}</title>${bars}</svg>`;
}

export interface Series {
  name: string;
  values: number[];
}

/**
 * Stacked bars per day, one colour per series. The bars are an SVG stretched to the box; the axis
 * labels are HTML, so they stay readable at any width. A legend and a data table go with it.
 */
export function stackedBars(opts: { days: string[]; series: Series[]; label: string; unit: string }): Html {
  const width = opts.days.length * 10;
  const height = 100;
  const totals = opts.days.map((_, i) => opts.series.reduce((s, x) => s + Math.max(0, x.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bars = opts.days.map((day, i) => {
    let y = height;
    return opts.series.map((s, k) => {
      const v = Math.max(0, s.values[i] ?? 0);
      if (v === 0) return html``;
      const h = (v / max) * height;
      y -= h;
      return html`<rect x="${i * 10 + 1}" y="${round(y)}" width="8" height="${round(h)}" class="series-${k % 8}"><title>${day} · ${s.name}: ${v} ${opts.unit}</title></rect>`;
    });
  });
  const grid = [0, 0.5, 1].map((f) => html`<line x1="0" x2="${width}" y1="${height * f}" y2="${height * f}" class="grid" vector-effect="non-scaling-stroke"/>`);
  const mid = Math.floor(opts.days.length / 2);
  const grand = totals.reduce((a, b) => a + b, 0);
  const alt = `${opts.label}: ${grand} ${opts.unit} over ${opts.days.length} days, at most ${Math.max(0, ...totals)} on one day`;
  const used = opts.series.filter((s) => s.values.some((v) => v !== 0));
  return html`<figure class="chart">
<div class="chart-frame">
<div class="chart-y" aria-hidden="true"><span>${max}</span><span>${Math.round(max * 5) / 10}</span><span>0</span></div>
<svg viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" class="stacked" role="img" aria-label="${alt}"><title>${alt}</title>${grid}${bars}</svg>
</div>
<div class="chart-x" aria-hidden="true"><span>${opts.days[0] ?? ''}</span><span>${opts.days[mid] ?? ''}</span><span>${opts.days[opts.days.length - 1] ?? ''}</span></div>
<figcaption>
<ul class="legend">${opts.series.map((s, k) => html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" class="series-${k % 8}"/></svg>${s.name}</li>`)}</ul>
${used.length
  ? html`<details class="chart-data"><summary>Chart data</summary><div class="table-scroll"><table class="data compact"><caption class="visually-hidden">${opts.label}</caption>
<thead><tr><th scope="col">Day</th>${used.map((s) => html`<th scope="col" class="num">${s.name}</th>`)}</tr></thead>
<tbody>${opts.days
      .map((day, i) => ({ day, i }))
      .filter(({ i }) => used.some((s) => (s.values[i] ?? 0) !== 0))
      .map(({ day, i }) => html`<tr><th scope="row">${day}</th>${used.map((s) => html`<td class="num">${s.values[i] ?? 0}</td>`)}</tr>`)}</tbody></table></div></details>`
  : html`<p class="empty">No credits used in this period.</p>`}
</figcaption>
</figure>`;
}
