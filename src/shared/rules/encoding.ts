// Content-coding rules: pick br/gzip from Accept-Encoding (RFC 9110 §12.5.3); which types compress is the
// media-type table's (media-types.ts isCompressible).

export type Encoding = 'br' | 'gzip';

// Results per distinct Accept-Encoding value. Browsers send a handful of distinct values
// ("gzip, deflate, br", "gzip, deflate, br, zstd", ...), so this almost always hits; it is cleared when
// full so that a client sending random values cannot grow it without bound.
const ENCODING_CACHE_MAX = 256;
const encodingCache = new Map<string, Encoding | null>();

/**
 * Chooses the pre-compressed variant to send for an `Accept-Encoding` value, or `null` for identity.
 * - Members are `coding[;q=value]`, names case-insensitive (§12.5.3); `q=0` means "not acceptable";
 *   `x-gzip` counts as `gzip` (§8.4.1.3).
 * - `*` gives its q to br/gzip when they are not listed explicitly.
 * - br wins over gzip at equal q (smaller output). `identity` is only preferred when it is listed
 *   explicitly with a higher q than the best compressed coding.
 * - Header absent → `null`: a missing Accept-Encoding technically allows any coding, but proxies and
 *   old clients that omit it often cannot decode, so identity is the safe answer. Empty value → `null`.
 * Invalid members (bad q-value) are ignored.
 */
export function pickEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (acceptEncoding === undefined || acceptEncoding === '') return null;
  const cached = encodingCache.get(acceptEncoding);
  if (cached !== undefined) return cached;
  const result = computeEncoding(acceptEncoding);
  if (encodingCache.size >= ENCODING_CACHE_MAX) encodingCache.clear();
  encodingCache.set(acceptEncoding, result);
  return result;
}

const UNSET = -1;

function computeEncoding(header: string): Encoding | null {
  let qBr = UNSET;
  let qGzip = UNSET;
  let qStar = UNSET;
  let qIdentity = UNSET;
  for (const member of header.split(',')) {
    const semi = member.indexOf(';');
    const name = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (name === '') continue;
    const q = semi < 0 ? 1 : parseWeight(member.slice(semi + 1));
    if (q < 0) continue; // invalid weight: ignore this member
    // A coding listed twice keeps its highest weight.
    if (name === 'br') qBr = Math.max(qBr, q);
    else if (name === 'gzip' || name === 'x-gzip') qGzip = Math.max(qGzip, q);
    else if (name === '*') qStar = Math.max(qStar, q);
    else if (name === 'identity') qIdentity = Math.max(qIdentity, q);
  }
  const br = qBr !== UNSET ? qBr : qStar !== UNSET ? qStar : 0;
  const gzip = qGzip !== UNSET ? qGzip : qStar !== UNSET ? qStar : 0;
  const best = br >= gzip ? br : gzip;
  if (best <= 0 || qIdentity > best) return null;
  return br >= gzip ? 'br' : 'gzip';
}

/**
 * Parses the parameters after `;` and returns the q-value in [0, 1], 1 when no q parameter is
 * present, or -1 when the q-value is malformed. qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 * (RFC 9110 §12.4.2); the parameter name is case-insensitive; other parameters are ignored.
 */
function parseWeight(params: string): number {
  for (const p of params.split(';')) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    if (p.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    return parseQValue(p.slice(eq + 1).trim());
  }
  return 1;
}

function parseQValue(v: string): number {
  const c0 = v.charCodeAt(0);
  if ((c0 !== 0x30 && c0 !== 0x31) || v.length > 5) return -1; // "0" / "1", at most 3 decimals
  if (v.length === 1) return c0 - 0x30;
  if (v.charCodeAt(1) !== 0x2e /* . */) return -1;
  for (let i = 2; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c0 === 0x31 ? c !== 0x30 : c < 0x30 || c > 0x39) return -1; // "1." allows only zeros
  }
  return Number(v);
}
