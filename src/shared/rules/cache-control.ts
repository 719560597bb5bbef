// Cache-Control policy for served files: revalidate everything, except fingerprinted assets which are immutable.
//
// Policy (documented for site owners):
// - HTML (`text/html`) → `public, max-age=0, must-revalidate`. A new deploy must show up on the very next
//   page load, so browsers and CDNs may store pages but must revalidate them (cheap: ETag → 304).
// - Any other file → the same, by default: `/logo.png` or `/app.js` may be replaced by the next deploy
//   under the same name, and a long max-age would keep serving the old one.
// - Fingerprinted files → `public, max-age=31536000, immutable` (one year, RFC 9111 §5.2.2.1 and the
//   `immutable` extension, RFC 8246). Bundlers (Vite/Rollup, webpack, esbuild, Parcel) put a content hash
//   in the file name, so a changed file gets a new name and the old name never changes content.
//
// "Fingerprinted" is a heuristic on the file name (not the folders). The stem (name minus its last
// extension) is split at `.` and `-`; any piece other than the first (`app.3f9a1c2b.js`,
// `main-BfX9aK2q.css`, `index-4f3a9c2d.js`) that is 8–128 chars of [A-Za-z0-9] and mixes letters and
// digits like a hash does counts: at least one digit, at least two letters, and the digits not all in one
// block at the start or end. Those last conditions keep ordinary names out: `my-document.pdf`,
// `annual-report2024.pdf`, `img-1920x1080.jpg`, `release-v20240115.zip`. A false positive would pin a stale
// file for a year, a false negative only costs a revalidation, so the rule errs on the side of "not a
// hash" (some real hashes without digits, e.g. `index-DiwrgTda.js`, are not recognised).

export const CACHE_REVALIDATE = 'public, max-age=0, must-revalidate';
export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';

/** Cache-Control for a site file, by its site-relative path and its Content-Type. */
export function cacheControlFor(path: string, contentType: string): string {
  if (isHtml(contentType)) return CACHE_REVALIDATE;
  return isFingerprinted(path) ? CACHE_IMMUTABLE : CACHE_REVALIDATE;
}

function isHtml(contentType: string): boolean {
  // Case-insensitive "text/html" prefix followed by end, ';' or whitespace.
  if (!contentType.startsWith('text/html')) {
    if (contentType.length < 9 || contentType.slice(0, 9).toLowerCase() !== 'text/html') return false;
  }
  const c = contentType.charCodeAt(9);
  return Number.isNaN(c) || c === 0x3b || c === 0x20 || c === 0x09;
}

/** Whether the file name of `path` carries a content hash (see the policy above). */
export function isFingerprinted(path: string): boolean {
  const nameStart = path.lastIndexOf('/') + 1;
  let stemEnd = path.lastIndexOf('.');
  if (stemEnd < nameStart) stemEnd = path.length; // no extension
  // Walk the pieces of the stem; the first piece (the name itself) is never the hash.
  let pieceStart = -1;
  for (let i = nameStart; i <= stemEnd; i++) {
    const c = i < stemEnd ? path.charCodeAt(i) : 0x2e;
    if (c !== 0x2e /* . */ && c !== 0x2d /* - */) continue;
    if (pieceStart >= 0 && isHashLike(path, pieceStart, i)) return true;
    pieceStart = i + 1;
  }
  return false;
}

function isHashLike(s: string, start: number, end: number): boolean {
  const len = end - start;
  if (len < 8 || len > 128) return false;
  let digits = 0;
  let letters = 0;
  let switches = 0; // digit <-> letter transitions
  let prevDigit = false;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    const isDigit = c >= 0x30 && c <= 0x39;
    if (isDigit) digits++;
    else if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) letters++;
    else return false;
    if (i > start && isDigit !== prevDigit) switches++;
    prevDigit = isDigit;
  }
  return digits >= 1 && letters >= 2 && switches >= 2;
}
