// Response heads of the site fast path. The site server's header objects are built once per file
// representation (src/serve/manifest.ts), so each is validated and serialized once too and the text
// reused: a response head is then the status line, Date, the connection fields and that text.

import type { OutgoingHttpHeaders } from 'node:http';
import { STATUS_CODES } from 'node:http';
import { ownedString } from '../../shared/strings.js';

/** A header object serialized: `Name: value\r\n` lines, and whether it sets Content-Length (and to what). */
export interface HeaderBlock {
  readonly text: string;
  readonly hasLength: boolean;
  /** The Content-Length value as a number, or null when absent or not a plain decimal. */
  readonly length: number | null;
}

// The same checks node:http applies in writeHead (RFC 9110 §5.1 token; §5.5 field-value characters).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const blocks = new WeakMap<OutgoingHttpHeaders, HeaderBlock>();

/**
 * The serialized form of `headers` (memoised per object: callers must not mutate an object after its
 * first use, which the site server's precomputed headers never are). Throws, as node:http does, on a
 * name or value that cannot be sent.
 */
export function headerBlock(headers: OutgoingHttpHeaders): HeaderBlock {
  let block = blocks.get(headers);
  if (block === undefined) {
    block = serialize(headers);
    blocks.set(headers, block);
  }
  return block;
}

function serialize(headers: OutgoingHttpHeaders): HeaderBlock {
  let text = '';
  let hasLength = false;
  let length: number | null = null;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (
      lower === 'connection' ||
      lower === 'keep-alive' ||
      lower === 'date' ||
      lower === 'transfer-encoding'
    ) {
      throw new TypeError(`header ${name} is set by the connection, not the site server`);
    }
    if (lower === 'content-length') {
      hasLength = true;
      length = /^\d{1,15}$/.test(String(value)) ? Number(value) : null;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      const s = String(one);
      if (!FIELD_VALUE.test(s)) throw new TypeError(`invalid value for header ${name}`);
      text += `${name}: ${s}\r\n`;
    }
  }
  // One flat string: the += chain would keep ~30 pieces per block, and be flattened again on every write.
  return { text: ownedString(text), hasLength, length };
}

/** `HTTP/1.1 <status> <reason>\r\n` for every status node:http knows. */
const statusLines: string[] = [];
export function statusLine(status: number): string {
  let line = statusLines[status];
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
    statusLines[status] = line;
  }
  return line;
}

// RFC 9110 §6.6.1: an origin server with a clock sends Date. One string per second, as node:http does.
let dateLine = '';
function resetDate(): void {
  dateLine = '';
}

export function currentDateLine(): string {
  if (dateLine === '') {
    const now = new Date();
    dateLine = `Date: ${now.toUTCString()}\r\n`;
    setTimeout(resetDate, 1000 - now.getMilliseconds()).unref();
  }
  return dateLine;
}

/** A status without a body (RFC 9110 §6.4.1): no Content-Length is added for it. */
export function statusHasNoBody(status: number): boolean {
  return status === 304 || status === 204 || status < 200;
}
