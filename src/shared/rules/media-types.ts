// Media types: the one table of what the service does with each type of file. The charset rule
// (content-type.ts), compression (manifest.ts via isCompressible), the one-file viewer (serve/viewer.ts)
// and the secret scan (core/scan/scanner.ts) all read it, so they cannot disagree on what a type is.

/** How the one-file viewer shows a file. */
export type ViewerKind = 'image' | 'pdf' | 'video' | 'audio' | 'text' | 'download';

export interface MediaClass {
  /**
   * Text: sent with `; charset=utf-8` unless it names a charset (so browsers never sniff another
   * encoding; JSON has no charset parameter, RFC 8259 §11, but it is UTF-8 and the parameter is
   * harmless), and scanned for secrets.
   */
  readonly text: boolean;
  /** Worth br/gzip: not raster images, WOFF/WOFF2 (already compressed), archives, PDF, audio, video. */
  readonly compressible: boolean;
  readonly view: ViewerKind;
}

const TEXT: MediaClass = { text: true, compressible: true, view: 'text' };
/** Text formats that compress but are not marked text (sent without a charset, offered for download). */
const COMPRESSIBLE: MediaClass = { text: false, compressible: true, view: 'download' };
const OTHER: MediaClass = { text: false, compressible: false, view: 'download' };
const IMAGE: MediaClass = { text: false, compressible: false, view: 'image' };

/** Types by essence (`type/subtype`, lower case); checked before the families below. */
const TYPES: ReadonlyMap<string, MediaClass> = new Map([
  ['application/javascript', TEXT],
  ['application/x-javascript', TEXT],
  ['application/ecmascript', TEXT],
  ['application/json', TEXT],
  ['application/manifest+json', TEXT],
  ['application/ld+json', TEXT],
  ['application/geo+json', TEXT],
  ['application/xml', TEXT],
  ['application/xhtml+xml', TEXT],
  ['application/rss+xml', TEXT],
  ['application/atom+xml', TEXT],
  ['image/svg+xml', { text: true, compressible: true, view: 'image' }],
  ['application/pdf', { text: false, compressible: false, view: 'pdf' }],
  ['application/wasm', COMPRESSIBLE],
  ['application/x-ndjson', COMPRESSIBLE],
  ['application/yaml', COMPRESSIBLE],
  ['application/toml', COMPRESSIBLE],
  ['application/x-sh', COMPRESSIBLE],
  // Uncompressed font formats (TTF/OTF/EOT).
  ['application/vnd.ms-fontobject', COMPRESSIBLE],
  ['application/x-font-ttf', COMPRESSIBLE],
  ['application/x-font-otf', COMPRESSIBLE],
  ['application/x-font-truetype', COMPRESSIBLE],
  ['application/x-font-opentype', COMPRESSIBLE],
  ['font/ttf', COMPRESSIBLE],
  ['font/otf', COMPRESSIBLE],
  ['font/sfnt', COMPRESSIBLE],
  ['font/collection', COMPRESSIBLE],
]);

/** Top-level types, for essences not in TYPES. */
const TOP_LEVEL: ReadonlyMap<string, MediaClass> = new Map([
  ['text', TEXT],
  ['image', IMAGE],
  ['video', { text: false, compressible: false, view: 'video' }],
  ['audio', { text: false, compressible: false, view: 'audio' }],
]);

/** Structured syntax suffixes of `application/` types (RFC 6839): application/vnd.api+json, .../soap+xml. */
const APPLICATION_SUFFIXES = ['+json', '+xml'];

/** The class of a Content-Type value (parameters ignored, case-insensitive). */
export function mediaClass(contentType: string): MediaClass {
  const semi = contentType.indexOf(';');
  const essence = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  const known = TYPES.get(essence);
  if (known !== undefined) return known;
  const slash = essence.indexOf('/');
  const top = slash > 0 ? TOP_LEVEL.get(essence.slice(0, slash)) : undefined;
  if (top !== undefined) return top;
  if (essence.startsWith('application/') && APPLICATION_SUFFIXES.some((s) => essence.endsWith(s)))
    return TEXT;
  return OTHER;
}

/** text/*, and the textual application types: JS, JSON, XML, SVG, `+json`/`+xml` (parameters ignored). */
export function isTextualMediaType(contentType: string): boolean {
  return mediaClass(contentType).text;
}

const compressibleCache = new Map<string, boolean>();
const COMPRESSIBLE_CACHE_MAX = 512;

/** Whether a response of this Content-Type benefits from br/gzip (cached per distinct value). */
export function isCompressible(contentType: string): boolean {
  const cached = compressibleCache.get(contentType);
  if (cached !== undefined) return cached;
  const result = mediaClass(contentType).compressible;
  if (compressibleCache.size >= COMPRESSIBLE_CACHE_MAX) compressibleCache.clear();
  compressibleCache.set(contentType, result);
  return result;
}

/** How the one-file viewer shows a file of this Content-Type. */
export function viewerKind(contentType: string): ViewerKind {
  return mediaClass(contentType).view;
}
