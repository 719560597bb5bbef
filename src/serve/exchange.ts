// What the site server reads of a request and how it answers. Two transports carry site requests:
// node:http (NodeSiteResponse below; every request the fast path does not take, and every POST) and the
// site fast path (http1/connection.ts; plain GET and HEAD on keep-alive connections).

import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline, type Readable, Transform } from 'node:stream';
import type { ReuseTally } from '../core/analytics.js';
import { type BodyPace, existingPacedBody, pacedBody } from '../core/body-pace.js';

/**
 * The largest request head node:http reads (its default is 16 KiB; larger heads answer 431). A site's
 * visitor may carry every cookie other sites set on the parent SITE_DOMAIN (until it is on the Public
 * Suffix List): browsers keep up to 180 cookies of up to 4096 bytes per registrable domain (Chromium's
 * kDomainMaxCookies, Firefox's network.cookie.maxPerHost; RFC 6265bis §5.5), about 720 KiB, and no
 * site must be made unreachable by another's cookies. Caddy's default limit is the same 1 MiB.
 */
export const MAX_REQUEST_HEAD_BYTES = 1024 * 1024;

/** The parts of a request the site server reads (node's IncomingMessage has them too). */
export interface SiteRequestHead {
  readonly method?: string | undefined;
  /** The request target as sent. */
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** The connection (its peer address: the client's, or the last proxy's). */
  readonly socket?: { readonly remoteAddress?: string | undefined } | undefined;
  /** The clock (epoch ms) when the transport began the request, if it read it (the fast path; 0: not read). */
  readonly now?: number;
}

/**
 * A response that answers the same method, Host, path (the query plays no part in it) and Accept-Encoding
 * again, when the request has no Range, conditional or Cookie field (see SiteResponse.send).
 */
export interface Reuse {
  /** Epoch ms until which it holds (the site's expiry, or the end of the plan that routes its host). */
  readonly until: number;
  /** The site it was made from: a change event for it ends it. */
  readonly slug: string;
  /** The host it answered (lowercase, no port): a change event for that host ends it. */
  readonly host: string;
  /** What answering it again records for visitor analytics (core/analytics.ts); undefined: nothing. */
  readonly tally: ReuseTally | undefined;
  /**
   * Called by a transport that memoized the response: the host route, site state and bytes it was made
   * from were used for it and need not be kept for it (they are kept only as long as other answers use them).
   */
  readonly settle?: () => void;
}

export interface SiteResponse {
  /**
   * Sends the status line, `headers` and `body` (undefined: none, as for HEAD, 304 or redirects).
   * Header objects are serialized once and reused by the fast path: do not mutate one after use.
   * `reuse` marks a response the transport may answer again (the fast path memoizes it; node:http ignores
   * it).
   */
  send(status: number, headers: OutgoingHttpHeaders, body?: Buffer, reuse?: Reuse): void;
  /** Sends the status line and `headers`, then `body` with backpressure; destroys `body` if the client leaves. */
  stream(status: number, headers: OutgoingHttpHeaders, body: Readable, onError: (err: Error) => void): void;
  readonly headersSent: boolean;
  /** The client is gone. */
  readonly destroyed: boolean;
  /** Aborts the connection (after a failure once the head was sent). */
  destroy(): void;
}

/**
 * Called as an answer starts (node:http; the fast path takes no bodies). A request body not read to its
 * end would otherwise be drained by node:http at whatever pace the client likes, holding the connection:
 * it is drained under the pace rule instead (core/body-pace.ts; a client that trips it loses the
 * connection), or, when the client has already tripped it, the answer closes the connection (RFC 9112
 * §9.6). A fast client keeps its connection and reads the answer as node:http would let it.
 */
export function settleRequestBody(req: IncomingMessage, res: ServerResponse, pace: BodyPace): void {
  const read = existingPacedBody(req);
  if (read === undefined ? req.complete : read.finished) return;
  const body = read ?? pacedBody(req, pace);
  if (body.tooSlow) {
    res.shouldKeepAlive = false;
    return;
  }
  body.drain().catch(() => req.socket.destroy());
}

export class NodeSiteResponse implements SiteResponse {
  constructor(
    private readonly res: ServerResponse,
    private readonly pace: BodyPace,
  ) {}

  send(status: number, headers: OutgoingHttpHeaders, body?: Buffer): void {
    settleRequestBody(this.res.req, this.res, this.pace);
    this.res.writeHead(status, headers);
    this.res.end(body);
  }

  stream(status: number, headers: OutgoingHttpHeaders, body: Readable, onError: (err: Error) => void): void {
    settleRequestBody(this.res.req, this.res, this.pace);
    this.res.writeHead(status, headers);
    // A body shorter or longer than Content-Length fails the pipeline (which cuts the connection) instead
    // of leaving a keep-alive client reading the next response as the rest of this one.
    const expected = Number(headers['Content-Length'] ?? headers['content-length']);
    let seen = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        callback(null, chunk);
      },
      flush(callback) {
        const short = Number.isFinite(expected) && seen !== expected;
        callback(short ? new Error(`stored bytes ended after ${seen} of ${expected}`) : null);
      },
    });
    pipeline(body, counted, this.res, (err) => {
      // Premature close: the client left, which is not a failure. Anything else is (pipeline has already
      // destroyed the response, cutting the connection).
      if (err && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') onError(err);
    });
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
