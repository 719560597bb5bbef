// HTML for every page the service renders (web pages on the BASE_URL host, billing pages, the site
// server's built-in pages): a tagged template that escapes every interpolation unless it is already
// HTML, and the one shared layout and stylesheet. User data never reaches markup unescaped.

/** Markup that is already safe (built by `html` or `raw`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** The five characters that matter in text and quoted attributes, as numeric references (`&#60;`). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${userText}</p>\``: interpolations are escaped; arrays are joined; SafeHtml passes through. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/**
 * A timestamp as `<time>`: readable UTC in the markup ("2026-11-24 09:30 UTC"), the reader's local time
 * once the pages' script runs. `null` shows `empty`.
 */
export function timeTag(iso: string | null | undefined, empty = 'never'): SafeHtml {
  if (!iso) return html`${empty}`;
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return html`${iso}`;
  const text = `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return html`<time datetime="${when.toISOString()}">${text}</time>`;
}

/** Trusted markup from the code itself (never user data). */
export const raw = (markup: string) => new SafeHtml(markup);

/** The shared stylesheet: readable on a phone, visible focus, no external fonts or images. */
export const APP_CSS = `
:root{color-scheme:light dark;--fg:#1d1d1f;--muted:#5f6368;--bg:#fff;--panel:#f5f5f7;--accent:#0b57d0;--danger:#b3261e;--ok:#146c2e;--warn:#7a4f01;--warn-bg:#fff4d6}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#9aa0a6;--bg:#17181a;--panel:#222326;--accent:#8ab4f8;--danger:#f28b82;--ok:#81c995;--warn:#fdd663;--warn-bg:#3a3000}}
*{box-sizing:border-box}
body{font:16px/1.55 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
header.top{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;border-bottom:1px solid var(--panel)}
header.top a.brand{font-weight:700;text-decoration:none;color:var(--fg)}
header.top nav a{margin-left:1rem}header.top nav a:first-child{margin-left:0}
main{max-width:52rem;margin:0 auto;padding:1.5rem 1rem 4rem}
main h1{font-size:1.6rem;line-height:1.25}main h2{font-size:1.2rem;margin-top:2rem}
a{color:var(--accent)}
main :is(pre,code){font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
main pre{background:var(--panel);padding:.75rem 1rem;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
main table{border-collapse:collapse;width:100%}main :is(th,td){text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--panel);vertical-align:top}
main label{display:block;margin:.75rem 0 .25rem;font-weight:600}
main :is(input,select,button,textarea){font:inherit;padding:.45rem .6rem;border-radius:6px;border:1px solid var(--muted);background:var(--bg);color:var(--fg);max-width:100%}
main .wide{width:100%;box-sizing:border-box}
main button{cursor:pointer;background:var(--accent);color:var(--bg);border-color:var(--accent)}
main button.danger{background:var(--danger);border-color:var(--danger)}
main button.secondary,main button.copy{background:var(--panel);color:var(--fg);border-color:var(--muted)}
main button.copy{margin:.25rem 0 0;padding:.2rem .6rem;font-size:.9rem}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.muted{color:var(--muted)}.error{color:var(--danger)}.ok{color:var(--ok)}
.warn{color:var(--warn);background:var(--warn-bg);padding:.6rem .8rem;border-radius:6px}
main li{margin:.35rem 0}main li form,main td.actions form{display:inline-block;margin:0 .25rem .25rem .5rem}
main td.actions form{margin-left:0}
main code.record{overflow-wrap:anywhere}main ul.reports{list-style:none;padding:0}main li.report{border-top:1px solid #ddd;padding:.5rem 0}main .report-details{white-space:pre-wrap;overflow-wrap:anywhere}main .url{overflow-wrap:break-word}
main td.nowrap,main .nowrap{white-space:nowrap}main summary{cursor:pointer}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (max-width:40rem){table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
main table.stack tr{border-bottom:1px solid var(--muted);padding:.4rem 0}main table.stack td{border:0;padding:.15rem 0;overflow-wrap:anywhere}
table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}}
form[aria-busy=true] button{opacity:.6}
main td p{margin:0 0 .35rem}
main figure{margin:1rem 0}.chart{display:block;width:100%;height:auto}
.key{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;vertical-align:middle}.key-views{background:#9ec5ee}.key-visitors{background:#1f5fa8}
main td.wrap{overflow-wrap:anywhere}
main .axis{display:flex;justify-content:space-between;gap:.5rem;margin:.2rem 0;font-size:.9rem;color:var(--muted)}
.api-reference{max-width:72rem;margin:0 auto 4rem;padding:0 .5rem;background:#fff;color:#1d1d1f;color-scheme:light;border-radius:8px}
`.trim();

export interface LayoutOptions {
  title: string;
  body: SafeHtml;
  /** A stylesheet URL (web pages, under a strict CSP); without it the CSS is inlined (site hosts). */
  stylesheet?: string;
  /** A script URL (web pages only: the site hosts' built-in pages carry no script). */
  script?: string;
  /** More of the head (e.g. the API reference's own stylesheet and scripts). */
  head?: SafeHtml;
  /** Markup after `main`, outside its column and its element styles (the API reference's renderer). */
  after?: SafeHtml;
  /** Navigation links for the header. */
  nav?: Array<{ href: string; label: string }>;
}

/** A complete document in the shared layout. */
/**
 * The service's icon (a ramp into water, in the accent colour), served at /favicon.svg and at
 * /favicon.ico (where browsers ask when a page names none, e.g. a JSON document) by src/http/pages.
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b57d0"/>' +
  '<path d="M5 22 L27 9 V22 Z" fill="#fff"/><path d="M3 25.5 q3.25 -2.5 6.5 0 t6.5 0 t6.5 0 t6.5 0" fill="none" stroke="#8ab4f8" stroke-width="2" stroke-linecap="round"/></svg>';
export const FAVICON_PATH = '/favicon.svg';

export function layout(options: LayoutOptions): string {
  const style = options.stylesheet
    ? html`<link rel="stylesheet" href="${options.stylesheet}">`
    : html`<style>${raw(APP_CSS)}</style>`;
  const nav = options.nav ?? [];
  const script = options.script ? html`<script src="${options.script}" defer></script>` : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${options.title}</title><link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">${style}${script}${options.head ?? ''}</head>
<body><header class="top"><a class="brand" href="/">Slipway</a><nav>${nav.map((n) => html`<a href="${n.href}">${n.label}</a>`)}</nav></header>
<main>${options.body}</main>${options.after ?? ''}</body></html>
`.value;
}
