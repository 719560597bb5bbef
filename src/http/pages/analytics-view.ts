// The dashboard's analytics page of a site (issue 25): totals, a chart of visitors and page views drawn
// on the server as SVG (no script: readable without JavaScript, scales to a phone's width), top pages,
// referrers and 404s, and the switch that turns counting off for the site.

import type { AnalyticsReport } from '../../core/analytics.js';
import { formatBytes } from '../../core/format.js';
import { html, type SafeHtml } from '../../shared/html.js';

/** The ranges the page offers: the last 24 hours by hour, 7 or 30 days by day. */
export const ANALYTICS_RANGES = {
  '24h': { label: '24 hours', ms: 24 * 3_600_000, granularity: 'hour' },
  '7d': { label: '7 days', ms: 7 * 86_400_000, granularity: 'day' },
  '30d': { label: '30 days', ms: 30 * 86_400_000, granularity: 'day' },
} as const;
export type AnalyticsRange = keyof typeof ANALYTICS_RANGES;

const W = 600;
const H = 180;
const PAD_TOP = 6;
const PAD_BOTTOM = 2;

/** Bars per bucket: page views (light) with visitors (dark) in front; the peak and both ends labelled. */
export function chartSvg(r: AnalyticsReport): SafeHtml {
  const n = Math.max(r.series.length, 1);
  const peak = Math.max(1, ...r.series.map((p) => p.pageViews), ...r.series.map((p) => p.visitors));
  const slot = W / n;
  const bar = Math.max(1, slot * 0.7);
  const y = (v: number) => PAD_TOP + (H - PAD_TOP - PAD_BOTTOM) * (1 - v / peak);
  const base = H - PAD_BOTTOM;
  const label = (iso: string) => (r.granularity === 'hour' ? `${iso.slice(11, 16)}` : `${iso.slice(5, 10)}`);
  const first = r.series[0];
  const last = r.series.at(-1);
  return html`<svg class="chart" viewBox="0 0 ${String(W)} ${String(H)}" role="img" aria-labelledby="chart-title">
<title id="chart-title">Visitors and page views per ${r.granularity}, peak ${String(peak)}</title>
<line x1="0" y1="${String(base)}" x2="${String(W)}" y2="${String(base)}" stroke="#999" stroke-width="1"/>
<line x1="0" y1="${String(PAD_TOP)}" x2="${String(W)}" y2="${String(PAD_TOP)}" stroke="#ddd" stroke-width="1" stroke-dasharray="4 4"/>
${r.series.map((p, i) => {
  const x = i * slot + (slot - bar) / 2;
  return html`<rect x="${x.toFixed(1)}" y="${y(p.pageViews).toFixed(1)}" width="${bar.toFixed(1)}" height="${(base - y(p.pageViews)).toFixed(1)}" fill="#9ec5ee"><title>${p.start}: ${String(p.pageViews)} page views</title></rect><rect x="${(x + bar * 0.2).toFixed(1)}" y="${y(p.visitors).toFixed(1)}" width="${(bar * 0.6).toFixed(1)}" height="${(base - y(p.visitors)).toFixed(1)}" fill="#1f5fa8"><title>${p.start}: ${String(p.visitors)} visitors</title></rect>`;
})}
</svg>
<p class="axis"><span>${first ? label(first.start) : ''}</span><span>peak ${String(peak)} (dashed line)</span><span>${last && n > 1 ? label(last.start) : ''}</span></p>`;
}

function table(
  caption: string,
  head: [string, string],
  rows: Array<[string, number]>,
  empty: string,
): SafeHtml {
  if (rows.length === 0) return html`<h2>${caption}</h2><p class="muted">${empty}</p>`;
  return html`<h2>${caption}</h2><table class="stack"><thead><tr><th scope="col">${head[0]}</th><th scope="col">${head[1]}</th></tr></thead><tbody>${rows.map(
    ([k, v]) =>
      html`<tr><td data-label="${head[0]}" class="wrap">${k}</td><td data-label="${head[1]}">${String(v)}</td></tr>`,
  )}</tbody></table>`;
}

/** The page body below the heading. */
export function analyticsBody(
  r: AnalyticsReport,
  slug: string,
  range: AnalyticsRange,
  counting: boolean,
  csrf: SafeHtml,
): SafeHtml {
  const tabs = (Object.keys(ANALYTICS_RANGES) as AnalyticsRange[]).map((k) =>
    k === range
      ? html`<strong aria-current="page">${ANALYTICS_RANGES[k].label}</strong>`
      : html`<a href="/dashboard/sites/${slug}/analytics?range=${k}">${ANALYTICS_RANGES[k].label}</a>`,
  );
  const t = r.totals;
  return html`<p class="tabs">Last ${tabs.map((tab, i) => html`${i === 0 ? '' : ' · '}${tab}`)}</p>
${counting ? '' : html`<p class="warn" role="status">Counting is switched off for this site: new visits are not counted.</p>`}
<p class="totals"><strong>${String(t.visitors)}</strong> visitors · <strong>${String(t.pageViews)}</strong> page views · ${String(t.notFound)} not found · ${String(t.bots)} bot requests · ${formatBytes(t.bytes)} sent</p>
<figure>${chartSvg(r)}<figcaption class="muted"><span class="key key-views"></span> page views, <span class="key key-visitors"></span> visitors, per ${r.granularity} (UTC).</figcaption></figure>
<details><summary>The numbers</summary><table class="stack"><thead><tr><th scope="col">${r.granularity === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th><th scope="col">Page views</th><th scope="col">Visitors</th></tr></thead><tbody>${r.series.map(
    (p) =>
      html`<tr><td data-label="When">${r.granularity === 'hour' ? p.start.slice(0, 16).replace('T', ' ') : p.start.slice(0, 10)}</td><td data-label="Page views">${String(p.pageViews)}</td><td data-label="Visitors">${String(p.visitors)}</td></tr>`,
  )}</tbody></table></details>
${table(
  'Top pages',
  ['Page', 'Views'],
  r.topPaths.map((p) => [p.path, p.pageViews]),
  'No page views yet.',
)}
${table(
  'Referrers',
  ['From', 'Views'],
  r.topReferrers.map((p) => [p.host, p.pageViews]),
  'No visits from other sites yet.',
)}
${table(
  'Not found',
  ['Path', 'Requests'],
  r.notFoundPaths.map((p) => [p.path, p.count]),
  'No 404s.',
)}
${
  r.topHosts.length > 1
    ? table(
        'Hosts',
        ['Host', 'Views'],
        r.topHosts.map((p) => [p.host, p.pageViews]),
        '',
      )
    : ''
}
<h2>Counting</h2>
<p class="muted">Visits are counted by the server as it answers: no script, no cookie, nothing stored that identifies a visitor (a visitor is a hash that changes every day). Counts appear within a minute.</p>
<form method="post" action="/dashboard/sites/analytics">${csrf}<input type="hidden" name="slug" value="${slug}"><input type="hidden" name="analytics" value="${counting ? 'off' : 'on'}"><button class="${counting ? 'secondary' : ''}" type="submit">${counting ? 'Switch counting off' : 'Switch counting on'}</button></form>`;
}
