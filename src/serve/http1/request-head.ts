// The request heads the site fast path answers itself: strict, simple HTTP/1.x GET and HEAD requests
// without a body (RFC 9112 §2-§5). Anything else — another method, a body, Upgrade, Expect, a service
// worker's script update, obs-fold, a bare LF, an absolute-form target, a repeated field the site server
// reads, a byte out of place — is not parsed here at all: the connection is handed to node:http, whose parser answers or rejects it
// exactly as it does for the API. So this parser only has to be right about what it accepts.

import type { IncomingHttpHeaders } from 'node:http';

/** The fields the site server reads, with their values as node:http would give them (single occurrences). */
export interface SiteRequestHeaders extends IncomingHttpHeaders {
  host?: string;
  range?: string;
  'if-range'?: string;
  'accept-encoding'?: string;
  'if-none-match'?: string;
  'if-modified-since'?: string;
  cookie?: string;
  /** Read by visitor analytics (core/analytics.ts): bots, the visitor hash, the referrer, the client. */
  'user-agent'?: string;
  referer?: string;
  'x-forwarded-for'?: string;
}

export interface RequestHead {
  readonly method: 'GET' | 'HEAD';
  /** The request target as sent (origin-form: starts with `/`). */
  readonly url: string;
  readonly headers: SiteRequestHeaders;
  /** The connection stays open after the response (HTTP/1.1 default, or HTTP/1.0 with keep-alive). */
  readonly keepAlive: boolean;
}

/**
 * Heads up to this size are answered here; larger ones (a browser carrying a large cookie jar) go to
 * node:http, which reads up to MAX_REQUEST_HEAD_BYTES (exchange.ts) and answers 431 beyond. Keeping the
 * fast path's buffer small keeps its per-connection memory and its re-scans of a partial head small.
 */
export const MAX_HEAD_BYTES = 16 * 1024;

// RFC 9112 §3: method SP origin-form SP HTTP-version. Targets are visible ASCII only.
const REQUEST_LINE = /^(GET|HEAD) (\/[\x21-\x7e]*) HTTP\/1\.([01])$/;
// RFC 9110 §5.1, §5.5: field-name is a token; a value is visible ASCII, obs-text, SP and HTAB (no CR, LF,
// NUL or other controls). Every line ends in CRLF. Linear: the classes cannot overlap at a boundary.
const FIELD_LINES = /^(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*\r\n)*$/;

/**
 * Parses a complete request head (`head` is the latin1 text up to and including the blank line's first
 * CRLF, i.e. every line CRLF-terminated). Returns null when the fast path must not answer it.
 */
export function parseRequestHead(head: string): RequestHead | null {
  const lineEnd = head.indexOf('\r\n');
  if (lineEnd < 0) return null;
  const requestLine = REQUEST_LINE.exec(head.slice(0, lineEnd));
  if (requestLine === null) return null;
  const fields = lineEnd + 2 === head.length ? '' : head.slice(lineEnd + 2);
  if (fields !== '' && !FIELD_LINES.test(fields)) return null;

  const headers: SiteRequestHeaders = {
    host: undefined,
    range: undefined,
    'if-range': undefined,
    'accept-encoding': undefined,
    'if-none-match': undefined,
    'if-modified-since': undefined,
    cookie: undefined,
    'user-agent': undefined,
    referer: undefined,
    'x-forwarded-for': undefined,
  };
  const http11 = requestLine[3] === '1';
  let keepAlive = http11;
  let at = 0;
  while (at < fields.length) {
    const colon = fields.indexOf(':', at);
    const eol = fields.indexOf('\r\n', colon);
    const name = fields.slice(at, colon).toLowerCase();
    at = eol + 2;
    switch (name) {
      case 'host':
      case 'range':
      case 'if-range':
      case 'accept-encoding':
      case 'if-none-match':
      case 'if-modified-since':
      case 'cookie':
      case 'user-agent':
      case 'referer':
      case 'x-forwarded-for':
        // node:http joins or drops repeated fields by its own rules: let it.
        if (headers[name] !== undefined) return null;
        headers[name] = trimOws(fields, colon + 1, eol);
        break;
      case 'connection': {
        const tokens = trimOws(fields, colon + 1, eol).toLowerCase();
        if (tokens.includes('upgrade')) return null;
        if (tokens.includes('close')) keepAlive = false;
        else if (!http11 && tokens.includes('keep-alive')) keepAlive = true;
        break;
      }
      // A body (RFC 9112 §6.1-§6.3), a protocol switch or an expectation: node:http's job.
      case 'content-length':
      case 'transfer-encoding':
      case 'upgrade':
      case 'expect':
      // A worker's script update may get another answer than a plain GET (serve/service-worker.ts), which
      // the memo must never hand out: rare (once per controlled navigation), so node:http carries it.
      case 'service-worker':
        return null;
    }
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400, which node:http sends.
  if (http11 && headers.host === undefined) return null;
  return { method: requestLine[1] as 'GET' | 'HEAD', url: requestLine[2]!, headers, keepAlive };
}

/** The field value between `start` and `end` without leading or trailing SP/HTAB (RFC 9110 §5.5). */
function trimOws(s: string, start: number, end: number): string {
  while (start < end && (s.charCodeAt(start) === 0x20 || s.charCodeAt(start) === 0x09)) start++;
  while (end > start && (s.charCodeAt(end - 1) === 0x20 || s.charCodeAt(end - 1) === 0x09)) end--;
  return s.slice(start, end);
}
