// Generated pages for sites without index.html (CONTRACT "Serving"): a viewer for a site of one file, a
// directory listing with folder navigation otherwise; which one a request gets (serveGeneratedPage), and
// their title, description and Open Graph tags from the site's metadata. Every text from the site is
// escaped.

import { formatBytes } from '../core/format.js';
import type { SiteMount } from '../core/hosts.js';
import { html, raw, type SafeHtml } from '../shared/html.js';
import { type ViewerKind, viewerKind } from '../shared/rules/media-types.js';
import type { SiteState } from './catalog.js';
import type { SiteRequestHead, SiteResponse } from './exchange.js';
import type { FileEntry, VersionManifest } from './manifest.js';
import { htmlDocument } from './pages.js';

/** What a page says about itself: `<title>`, description and Open Graph tags. */
export interface PageMeta {
  readonly title: string;
  readonly description: string;
  /** Absolute URL of this page (og:url). */
  readonly url: string;
  /** Absolute URL of the preview image (og:image), or null. */
  readonly image: string | null;
}

/** Percent-encodes each segment of a site path for use in a URL path. */
export function encodeSitePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function metaTags(meta: PageMeta, type: string): SafeHtml {
  const image =
    meta.image !== null &&
    html`
<meta property="og:image" content="${meta.image}">
<meta name="twitter:card" content="summary_large_image">`;
  return html`
<meta name="description" content="${meta.description}">
<meta property="og:type" content="${type}">
<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${meta.description}">
<meta property="og:url" content="${meta.url}">${image}`;
}

const VIEWER_STYLE = raw(
  '<style>body>main{max-width:none;margin:0;padding:0;display:flex;flex-direction:column;min-height:100vh}' +
    'header{padding:.75rem 1rem;border-bottom:1px solid #ddd;display:flex;gap:1rem;align-items:baseline}' +
    'main header h1{margin:0;font-size:1.1rem;flex:1;overflow-wrap:anywhere}' +
    '.stage{flex:1;display:flex;align-items:center;justify-content:center;background:#f6f6f6}' +
    '.stage img,.stage video{max-width:100%;max-height:85vh}.stage iframe{width:100%;height:85vh;border:0}</style>',
);

/** How each kind of file is shown on the viewer's stage; `src` is the file's URL, `name` its path. */
const STAGES: Record<ViewerKind, (src: string, name: string) => SafeHtml> = {
  image: (src, name) => html`<img src="${src}" alt="${name}">`,
  pdf: (src, name) => html`<iframe src="${src}" title="${name}"></iframe>`,
  video: (src) => html`<video src="${src}" controls playsinline></video>`,
  audio: (src) => html`<audio src="${src}" controls></audio>`,
  text: (src, name) => html`<iframe src="${src}" title="${name}"></iframe>`,
  download: (src, name) => html`<p><a href="${src}" download>Download ${name}</a></p>`,
};

/** The viewer page of a one-file site; `src` is the file's URL (path) on the site. */
export function renderViewerPage(meta: PageMeta, file: FileEntry, src: string): string {
  const stage = STAGES[viewerKind(file.contentType)](src, file.path);
  const size = html`<span>${formatBytes(file.size)}</span>`;
  const header = html`<header><h1>${meta.title}</h1>${size} <a href="${src}">Open file</a></header>`;
  const body = html`<main>${header}<div class="stage">${stage}</div></main>`;
  return htmlDocument(meta.title, body, html`${metaTags(meta, 'website')}${VIEWER_STYLE}`);
}

/** One folder of a site: its direct subfolders and files. */
export interface FolderListing {
  readonly folders: string[];
  readonly files: FileEntry[];
}

/** Folder path (`''` for the root, `'a/b/'` otherwise) -> its listing, built once per manifest. */
export type FolderIndex = ReadonlyMap<string, FolderListing>;

const folderIndexes = new WeakMap<VersionManifest, FolderIndex>();

export function folderIndexOf(manifest: VersionManifest): FolderIndex {
  let index = folderIndexes.get(manifest);
  if (index === undefined) {
    const folders = new Map<string, { folders: Set<string>; files: FileEntry[] }>();
    const folder = (path: string) => {
      let f = folders.get(path);
      if (f === undefined) {
        f = { folders: new Set(), files: [] };
        folders.set(path, f);
      }
      return f;
    };
    folder('');
    for (const entry of manifest.files.values()) {
      const parts = entry.path.split('/');
      let prefix = '';
      for (let i = 0; i < parts.length - 1; i++) {
        folder(prefix).folders.add(parts[i]!);
        prefix += `${parts[i]}/`;
      }
      folder(prefix).files.push(entry);
    }
    const sorted = new Map<string, FolderListing>();
    for (const [path, f] of folders) {
      sorted.set(path, {
        folders: [...f.folders].sort(),
        files: f.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      });
    }
    index = sorted;
    folderIndexes.set(manifest, index);
  }
  return index;
}

const LISTING_STYLE = raw('<style>ul.listing{list-style:none;padding:0}li{padding:.2rem 0}</style>');

/** The directory listing of `folder` (`''` or `'a/b/'`); `base` is the mount's path prefix (`''` usually). */
export function renderListingPage(
  meta: PageMeta,
  folder: string,
  listing: FolderListing,
  base: string,
): string {
  const crumbs = [html`<a href="${base}/">${meta.title}</a>`];
  let href = `${base}/`;
  for (const part of folder.split('/').filter(Boolean)) {
    href += `${encodeURIComponent(part)}/`;
    crumbs.push(html` / <a href="${href}">${part}</a>`);
  }
  const rows: SafeHtml[] = [];
  if (folder !== '') {
    const parent = folder.slice(0, folder.slice(0, -1).lastIndexOf('/') + 1);
    rows.push(html`<li><a href="${`${base}/${encodeSitePath(parent)}`}">../</a></li>`);
  }
  for (const name of listing.folders) {
    rows.push(
      html`<li class="folder"><a href="${`${base}/${encodeSitePath(folder + name)}/`}">${name}/</a></li>`,
    );
  }
  for (const file of listing.files) {
    const link = html`<a href="${`${base}/${encodeSitePath(file.path)}`}">${file.path.slice(folder.length)}</a>`;
    rows.push(html`<li class="file">${link} <small>${formatBytes(file.size)}</small></li>`);
  }
  const body = html`<main><nav>${crumbs}</nav><h1>Index of /${folder}</h1><ul class="listing">${rows}</ul></main>`;
  return htmlDocument(
    folder === '' ? meta.title : `${folder} — ${meta.title}`,
    body,
    html`${metaTags(meta, 'website')}${LISTING_STYLE}`,
  );
}

/** What a generated page reads of a request that landed in a site (the site server's SiteRequest). */
export interface PageRequest {
  readonly req: SiteRequestHead;
  readonly res: SiteResponse;
  readonly state: SiteState;
  readonly manifest: VersionManifest;
  readonly mount: SiteMount;
  /** Path below the mount, still percent-encoded, without query. */
  readonly sitePath: string;
  /** `?...` of the request, or ''. */
  readonly query: string;
}

/** How a generated page is answered: the site server's own sends (headers, HEAD, counting). */
export interface PageResponder<R extends PageRequest> {
  sendHtml(sr: R, html: string): void;
  redirect(res: SiteResponse, status: number, location: string): void;
}

/** The origins a generated page names in its Open Graph URLs. */
export interface PageOrigin {
  readonly scheme: 'http' | 'https';
  readonly siteDomain: string;
}

/**
 * Answers with the viewer (a one-file site, at `/`) or a directory listing, for a site without index.html
 * whose request found no file; false when neither applies (the caller answers 404).
 */
export function serveGeneratedPage<R extends PageRequest>(
  out: PageResponder<R>,
  origin: PageOrigin,
  sr: R,
  decoded: string,
): boolean {
  const { manifest } = sr;
  if (decoded === '' && manifest.soleFile !== null) {
    const file = manifest.soleFile;
    const src = `${sr.mount.basePath}/${encodeSitePath(file.path)}`;
    const meta = pageMeta(origin, sr, file.path, file.contentType.startsWith('image/') ? src : null);
    out.sendHtml(sr, renderViewerPage(meta, file, src));
    return true;
  }
  const index = folderIndexOf(manifest);
  if (decoded === '' || decoded.endsWith('/')) {
    const listing = index.get(decoded);
    if (listing === undefined || manifest.files.has(`${decoded}index.html`)) return false;
    out.sendHtml(
      sr,
      renderListingPage(
        pageMeta(origin, sr, sr.state.record!.slug, null),
        decoded,
        listing,
        sr.mount.basePath,
      ),
    );
    return true;
  }
  if (index.has(`${decoded}/`)) {
    // A folder named without its slash: list it under the slash URL so relative links work.
    out.redirect(sr.res, 301, `${sr.mount.basePath}/${encodeSitePath(decoded)}/${sr.query}`);
    return true;
  }
  return false;
}

/** Title, description and Open Graph URLs of a generated page, from the site's metadata. */
function pageMeta(
  origin: PageOrigin,
  sr: PageRequest,
  fallbackTitle: string,
  fallbackImage: string | null,
): PageMeta {
  const record = sr.state.record!;
  const base = originOf(origin, sr);
  const title = record.title ?? fallbackTitle;
  const description = record.description ?? `${title}, shared with Slipway.`;
  const imagePath =
    record.ogImagePath !== null
      ? `${sr.mount.basePath}/${encodeSitePath(record.ogImagePath)}`
      : fallbackImage;
  return {
    title,
    description,
    url: base + sr.mount.basePath + sr.sitePath,
    image: imagePath === null ? null : base + imagePath,
  };
}

/** `scheme://host[:port]` of the request (its Host resolved to this site, so it is one of its origins). */
function originOf(origin: PageOrigin, sr: PageRequest): string {
  const host = (sr.req.headers.host ?? '').toLowerCase();
  const safe = /^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(host)
    ? host
    : `${sr.state.record!.slug}.${origin.siteDomain}`;
  return `${origin.scheme}://${safe}`;
}
