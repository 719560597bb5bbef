// Preview and alias hosts (`<slug>--<name>.<site domain>`, CONTRACT "Previews and aliases") are served by
// the same flow as the live host; every answer of theirs, files, pages, redirects and the password form
// alike, carries `X-Robots-Tag: noindex` so search engines never list a preview beside the site.

import type { OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Reuse, SiteResponse } from './exchange.js';

/** Google, Bing and the others read this field on any response (not only HTML). */
const NOINDEX: OutgoingHttpHeaders = { 'X-Robots-Tag': 'noindex' };

/**
 * The header objects with the field added, one per original: the site server's header objects are built
 * once per file and representation, so a warm preview request allocates nothing here.
 */
const withNoindex = new WeakMap<OutgoingHttpHeaders, OutgoingHttpHeaders>();

export function noindexHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let out = withNoindex.get(headers);
  if (out === undefined) {
    out = { ...headers, ...NOINDEX };
    withNoindex.set(headers, out);
  }
  return out;
}

/** A response of a preview or alias host: the transport's, with `X-Robots-Tag: noindex` on every answer. */
export class PreviewResponse implements SiteResponse {
  constructor(private readonly res: SiteResponse) {}

  send(status: number, headers: OutgoingHttpHeaders, body?: Buffer, reuse?: Reuse): void {
    this.res.send(status, noindexHeaders(headers), body, reuse);
  }

  stream(status: number, headers: OutgoingHttpHeaders, body: Readable, onError: (err: Error) => void): void {
    this.res.stream(status, noindexHeaders(headers), body, onError);
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get destroyed(): boolean {
    return this.res.destroyed;
  }

  destroy(): void {
    this.res.destroy();
  }
}
