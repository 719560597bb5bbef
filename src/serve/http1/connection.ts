// The site fast path: plain GET and HEAD requests to site hosts are read off the socket and answered
// here, without node:http's per-request machinery (IncomingMessage, ServerResponse, header validation on
// every writeHead). The first request of a connection that is anything else — the API host, a body, a
// malformed or unusual head — hands the connection, bytes already read included, to node:http's own
// connection listener, which serves it from then on exactly as it would have without this module.
//
// Keep-alive, pipelining (answered in order, one at a time), write backpressure, the server's
// keepAliveTimeout and headersTimeout, half-closed clients and graceful close follow node:http's
// behaviour. DESIGN "Performance targets": bare node:http alone is ~0.6 x nginx; this is the headroom.

import type { OutgoingHttpHeaders, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { ReuseTally } from '../../core/analytics.js';
import { hostnameOf } from '../../core/hosts.js';
import type { Reuse, SiteRequestHead, SiteResponse } from '../exchange.js';
import { type MemoEntry, type MemoStore, ResponseMemo } from './memo.js';
import {
  MAX_HEAD_BYTES,
  parseRequestHead,
  type RequestHead,
  type SiteRequestHeaders,
} from './request-head.js';
import { currentDateLine, headerBlock, statusHasNoBody, statusLine } from './response-head.js';

export interface SiteFastPathOptions {
  /** Whether requests for this hostname (as hostnameOf gives it) belong to the site server. */
  isSiteHost(hostname: string): boolean;
  /** The site server's entry point. */
  handle(req: SiteRequestHead, res: SiteResponse, hostname: string): void;
  /**
   * Where memoized responses (memo.ts) are kept: a partition of the site server's serving memory; absent
   * turns the memo off.
   */
  memoStore?: MemoStore;
  /** The site server's change-event count (a memo entry records the count it was made at). */
  generation(): number;
  /** Whether no change event that could alter `slug`'s answers on `host` came after `generation`. */
  unchangedSince(slug: string, host: string, generation: number): boolean;
  /** Epoch ms on the service clock (memo entries end at their site's expiry). */
  now(): number;
  /** Counts a response answered from the memo (the site server's responses-by-status metric). */
  countResponse(status: number): void;
  /**
   * Records a memoized response answered again for visitor analytics (the entry's tally, the request, the
   * clock reading the memo lookup used).
   */
  countReuse?(tally: ReuseTally, req: SiteRequestHead, now: number): void;
  /**
   * Connections the fast path reads; any other goes straight to node:http (a plain connection when the
   * service redirects plain HTTP to https). Unset = every connection.
   */
  servesConnection?(socket: Socket): boolean;
  /** Targets under this prefix go to node:http (ACME HTTP-01 challenges, answered before any site). */
  reservedPrefix?: string;
}

export interface SiteFastPath {
  /** Destroys idle connections and closes the others after their current response (server close). */
  closeIdle(): void;
  /** Connections the fast path holds now, and requests it answered (for tests and metrics). */
  stats(): FastPathStats;
}

export interface FastPathStats {
  connections: number;
  requests: number;
  handedOff: number;
  memoHits: number;
  memoBytes: number;
}

/** A GET whose response can only depend on method, Host, target and Accept-Encoding (see SiteResponse.send). */
function isMemoCandidate(head: RequestHead): boolean {
  const h = head.headers;
  return (
    head.method === 'GET' &&
    h.range === undefined &&
    h['if-range'] === undefined &&
    h['if-none-match'] === undefined &&
    h['if-modified-since'] === undefined &&
    h.cookie === undefined
  );
}

/**
 * Responses up to this size are copied into one buffer from Buffer's shared pool and sent in one write;
 * larger ones go out as head + body in one writev (a larger copy would allocate a buffer of its own).
 */
const COALESCE_MAX_BYTES = Buffer.poolSize >>> 1;
/** Pipelined bytes buffered while a response is in progress before the socket is paused. */
const MAX_PIPELINED_BYTES = 64 * 1024;
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const CONNECTION_CLOSE = 'Connection: close\r\n';
/** node:http's answer when a head does not arrive within headersTimeout. */
const REQUEST_TIMEOUT_RESPONSE = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/**
 * Takes over `server`'s connections: site GET/HEAD requests are answered by `options.handle` through the
 * fast path; every other connection goes to node:http's listener (and so to the server's request handler).
 * Returns null, changing nothing, if the server does not have exactly node:http's one connection listener
 * (a Node release that wires connections differently): node:http then serves everything, as before.
 */
export function installSiteFastPath(server: Server, options: SiteFastPathOptions): SiteFastPath | null {
  const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  if (nodeListeners.length !== 1) return null;
  const nodeConnection = nodeListeners[0]!;
  server.removeAllListeners('connection');
  const front = new FastPath(server, options, (socket) => nodeConnection.call(server, socket));
  server.on('connection', (socket: Socket) => front.accept(socket));
  return front;
}

class FastPath implements SiteFastPath {
  readonly connections = new Set<Http1Connection>();
  /** Seconds since start, advanced by the sweep timer; connections stamp their activity with it. */
  tick = 0;
  requests = 0;
  handedOff = 0;
  memoHits = 0;
  closing = false;
  readonly memo: ResponseMemo | null;
  readonly keepAliveLines: string;
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(
    readonly server: Server,
    readonly options: SiteFastPathOptions,
    readonly toNode: (socket: Socket) => void,
  ) {
    this.memo = options.memoStore === undefined ? null : new ResponseMemo(options.memoStore, options);
    const keepAliveS = Math.floor(server.keepAliveTimeout / 1000);
    this.keepAliveLines =
      keepAliveS > 0
        ? `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveS}\r\n`
        : 'Connection: keep-alive\r\n';
    this.sweepTimer = setInterval(() => this.sweep(), 1000);
    this.sweepTimer.unref();
    server.once('close', () => clearInterval(this.sweepTimer));
  }

  accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.options.servesConnection !== undefined && !this.options.servesConnection(socket)) {
      this.toNode(socket);
      return;
    }
    this.connections.add(new Http1Connection(this, socket));
  }

  /** Connections may stay open; false once the server is closing. */
  get keepAlive(): boolean {
    return !this.closing && this.server.listening;
  }

  closeIdle(): void {
    this.closing = true;
    for (const conn of this.connections) conn.closeIfIdle();
  }

  stats(): FastPathStats {
    return {
      connections: this.connections.size,
      requests: this.requests,
      handedOff: this.handedOff,
      memoHits: this.memoHits,
      memoBytes: this.memo?.bytes ?? 0,
    };
  }

  /** node:http's timeouts, at one-second resolution: a head must arrive in time; idle keep-alives end. */
  private sweep(): void {
    this.tick++;
    const headersTicks = Math.ceil(this.server.headersTimeout / 1000);
    const keepAliveMs = this.server.keepAliveTimeout;
    const idleTicks = Math.ceil(keepAliveMs / 1000);
    for (const conn of this.connections)
      conn.checkTimeouts(this.tick, headersTicks, keepAliveMs > 0 ? idleTicks : 0);
    if (!this.server.listening) this.closeIdle();
  }
}

/** One request on the fast path: what the site server reads, and its response. */
class Exchange implements SiteRequestHead, SiteResponse {
  readonly method: 'GET' | 'HEAD';
  readonly url: string;
  readonly headers: SiteRequestHeaders;
  readonly keepAlive: boolean;
  headersSent = false;

  constructor(
    private readonly conn: Http1Connection,
    head: RequestHead,
    /** Where a reusable response to this request is memoized (null: the request does not qualify). */
    readonly memoKey: string | null,
    /** The site server's generation when the request began. */
    readonly generation: number,
    /** The clock when the request began, if the memo lookup read it (0: not read). */
    readonly now: number,
  ) {
    this.method = head.method;
    this.url = head.url;
    this.headers = head.headers;
    this.keepAlive = head.keepAlive;
  }

  send(status: number, headers: OutgoingHttpHeaders, body?: Buffer, reuse?: Reuse): void {
    this.conn.send(this, status, headers, body, reuse);
  }

  stream(status: number, headers: OutgoingHttpHeaders, body: Readable, onError: (err: Error) => void): void {
    this.conn.stream(this, status, headers, body, onError);
  }

  get destroyed(): boolean {
    return this.conn.socket.destroyed;
  }

  get socket(): Socket {
    return this.conn.socket;
  }

  destroy(): void {
    this.conn.socket.destroy();
  }
}

class Http1Connection {
  /** Bytes read and not yet parsed (a partial head, or pipelined requests). */
  private buffered: Buffer | null = null;
  /** The request being answered; later pipelined requests wait in `buffered`. */
  private current: Exchange | null = null;
  private streaming: Readable | null = null;
  private awaitingDrain = false;
  /** Inside process(): a response sent synchronously must not re-enter it. */
  private processing = false;
  /** The client sent FIN (the server allows half-open connections, as node:http does). */
  private ended = false;
  private done = false;
  /** Responses finished on this connection. */
  private served = 0;
  /**
   * A memo hit's request as analytics reads it: one object per connection, its headers replaced per hit,
   * and the socket's peer address read once (a Socket works it out through a getter on every read).
   */
  private readonly peer: {
    headers: SiteRequestHeaders;
    readonly socket: { readonly remoteAddress?: string };
  };
  /** Tick of the last byte read, and of the start of the head being awaited. */
  private lastActive: number;
  private headStarted: number;

  constructor(
    private readonly front: FastPath,
    readonly socket: Socket,
  ) {
    this.lastActive = front.tick;
    this.headStarted = front.tick;
    this.peer = { headers: {}, socket: { remoteAddress: socket.remoteAddress } };
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
  }

  // ---- reading ------------------------------------------------------------------------------------

  private readonly onData = (chunk: Buffer): void => {
    if (this.done) return;
    this.lastActive = this.front.tick;
    if (this.buffered === null) {
      this.buffered = chunk;
      if (this.current === null) this.headStarted = this.front.tick;
    } else {
      this.buffered = Buffer.concat([this.buffered, chunk]);
    }
    if (this.current !== null) {
      if (this.buffered.length > MAX_PIPELINED_BYTES) this.socket.pause();
      return;
    }
    this.process();
  };

  /** Answers the complete requests in `buffered`, in order, until one is in progress or more bytes are needed. */
  private process(): void {
    this.processing = true;
    try {
      while (this.buffered !== null && this.current === null && !this.done) {
        if (this.socket.writableNeedDrain) {
          // The client is not reading its responses: stop reading its requests until it does.
          this.socket.pause();
          if (!this.awaitingDrain) {
            this.awaitingDrain = true;
            this.socket.once('drain', this.onDrain);
          }
          return;
        }
        const buf = this.buffered;
        const end = buf.indexOf(CRLF_CRLF);
        if (end < 0 || end + 4 > MAX_HEAD_BYTES) {
          if (buf.length > MAX_HEAD_BYTES) {
            this.handOff();
            return;
          }
          break; // a partial head: wait for more bytes
        }
        const head = parseRequestHead(buf.toString('latin1', 0, end + 2));
        const memo = this.front.memo;
        let memoKey: string | null = null;
        let generation = 0;
        let now = 0;
        if (memo !== null && head !== null && isMemoCandidate(head)) {
          // Memo entries exist only for site hosts (the site server marked them), so a hit needs no routing.
          memoKey = ResponseMemo.key(head.headers.host ?? '', head.url, head.headers['accept-encoding']);
          generation = this.front.options.generation();
          now = this.front.options.now();
          const hit = memo.get(memoKey, generation, now);
          if (hit !== undefined) {
            this.buffered = end + 4 === buf.length ? null : buf.subarray(end + 4);
            this.headStarted = this.front.tick;
            this.front.requests++;
            this.front.memoHits++;
            this.front.options.countResponse(200);
            if (hit.tally !== undefined && this.front.options.countReuse !== undefined) {
              this.peer.headers = head.headers;
              this.front.options.countReuse(hit.tally, this.peer, now);
            }
            this.sendMemoized(head.keepAlive, hit);
            continue;
          }
        }
        const hostname = head === null ? '' : hostnameOf(head.headers.host);
        const reserved = this.front.options.reservedPrefix;
        if (
          head === null ||
          !this.front.options.isSiteHost(hostname) ||
          (reserved !== undefined && head.url.startsWith(reserved))
        ) {
          this.handOff();
          return;
        }
        this.buffered = end + 4 === buf.length ? null : buf.subarray(end + 4);
        this.headStarted = this.front.tick;
        const exchange = new Exchange(this, head, memoKey, generation, now);
        this.current = exchange;
        this.front.requests++;
        this.front.options.handle(exchange, exchange, hostname);
      }
      if (this.ended && this.current === null && !this.done) this.end();
    } finally {
      this.processing = false;
    }
  }

  private readonly onDrain = (): void => {
    this.awaitingDrain = false;
    if (this.done) return;
    this.socket.resume();
    this.process();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    if (this.current === null && !this.processing) this.process();
  };

  private readonly onError = (): void => {
    // Resets and broken pipes end the connection; 'close' follows. Nothing to answer.
  };

  private readonly onClose = (): void => {
    this.done = true;
    this.buffered = null;
    this.current = null;
    this.streaming?.destroy();
    this.streaming = null;
    this.front.connections.delete(this);
  };

  /**
   * From the current request on, node:http serves this connection: the bytes already read go back in
   * front of the socket's stream and node's connection listener takes it (as for any new connection).
   */
  private handOff(): void {
    this.done = true;
    this.front.connections.delete(this);
    this.front.handedOff++;
    const socket = this.socket;
    socket.pause();
    socket.removeListener('data', this.onData);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('error', this.onError);
    socket.removeListener('close', this.onClose);
    socket.removeListener('drain', this.onDrain);
    if (this.buffered !== null) socket.unshift(this.buffered);
    this.buffered = null;
    this.front.toNode(socket);
    socket.resume();
  }

  // ---- writing ------------------------------------------------------------------------------------

  send(
    exchange: Exchange,
    status: number,
    headers: OutgoingHttpHeaders,
    body: Buffer | undefined,
    reuse: Reuse | undefined,
  ): void {
    const keepAlive = this.begin(exchange);
    const head = this.head(exchange, status, headers, keepAlive, body?.length ?? 0);
    if (body === undefined || body.length === 0 || exchange.method === 'HEAD' || statusHasNoBody(status)) {
      this.socket.write(head, 'latin1');
    } else {
      this.write(head, body);
      if (reuse !== undefined && exchange.memoKey !== null && status === 200) {
        this.memoize(exchange, headers, body, reuse);
      }
    }
    this.finish(keepAlive);
  }

  /** A memoized 200: the status line and connection fields, then the stored fields and body. */
  private sendMemoized(keepAliveRequested: boolean, entry: MemoEntry): void {
    const keepAlive = keepAliveRequested && !this.ended && this.front.keepAlive;
    const head =
      statusLine(200) + currentDateLine() + (keepAlive ? this.front.keepAliveLines : CONNECTION_CLOSE);
    if (entry.page === null) this.write(head, entry.bytes);
    else {
      // Copied out, always: the slot may hold another response before a queued write would be sent.
      const out = Buffer.allocUnsafe(head.length + entry.length);
      out.write(head, 0, 'latin1');
      entry.bytes.copy(out, head.length, entry.offset, entry.offset + entry.length);
      this.socket.write(out);
    }
    this.finish(keepAlive);
  }

  private write(head: string, body: Buffer): void {
    const socket = this.socket;
    if (head.length + body.length < COALESCE_MAX_BYTES) {
      // One buffer, one write syscall: cheaper than writev's bookkeeping for small bodies.
      const out = Buffer.allocUnsafe(head.length + body.length);
      out.write(head, 0, 'latin1');
      body.copy(out, head.length);
      socket.write(out);
    } else {
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(body);
      socket.uncork();
    }
  }

  private memoize(exchange: Exchange, headers: OutgoingHttpHeaders, body: Buffer, reuse: Reuse): void {
    const block = headerBlock(headers);
    const fields = block.hasLength
      ? `${block.text}\r\n`
      : `${block.text}Content-Length: ${body.length}\r\n\r\n`;
    const stored = this.front.memo!.store(exchange.memoKey!, fields, body, {
      slug: reuse.slug,
      host: reuse.host,
      generation: exchange.generation,
      until: reuse.until,
      tally: reuse.tally,
    });
    if (stored) reuse.settle?.();
  }

  stream(
    exchange: Exchange,
    status: number,
    headers: OutgoingHttpHeaders,
    body: Readable,
    onError: (err: Error) => void,
  ): void {
    const keepAlive = this.begin(exchange);
    const block = headerBlock(headers);
    // Without a length the body can only be delimited by closing the connection (RFC 9112 §6.3).
    const persistent = keepAlive && block.hasLength;
    this.socket.write(this.head(exchange, status, headers, persistent, -1), 'latin1');
    if (exchange.method === 'HEAD') {
      body.destroy();
      this.finish(persistent);
      return;
    }
    this.streaming = body;
    let sent = 0;
    body.on('data', (chunk: Buffer) => {
      sent += chunk.length;
    });
    body.once('error', (err) => {
      this.streaming = null;
      if (!this.socket.destroyed) onError(err); // a client that left is not a failure (as for node:http)
      this.socket.destroy(); // the head promised bytes that will not come
    });
    body.once('end', () => {
      if (this.streaming !== body) return;
      this.streaming = null;
      body.unpipe(this.socket);
      if (block.length !== null && sent !== block.length) {
        // A short (or long) blob would desynchronise the connection: the client must see it cut instead.
        onError(new Error(`stored bytes ended after ${sent} of ${block.length}`));
        this.socket.destroy();
        return;
      }
      this.finish(persistent);
    });
    body.pipe(this.socket, { end: false });
  }

  /** Marks the response started; whether the connection stays open after it. */
  private begin(exchange: Exchange): boolean {
    if (exchange !== this.current || exchange.headersSent) throw new Error('response already sent');
    exchange.headersSent = true;
    return exchange.keepAlive && !this.ended && this.front.keepAlive;
  }

  private head(
    exchange: Exchange,
    status: number,
    headers: OutgoingHttpHeaders,
    keepAlive: boolean,
    bodyLength: number,
  ): string {
    const block = headerBlock(headers);
    let head =
      statusLine(status) +
      currentDateLine() +
      (keepAlive ? this.front.keepAliveLines : CONNECTION_CLOSE) +
      block.text;
    if (!block.hasLength && bodyLength >= 0 && !statusHasNoBody(status) && exchange.method !== 'HEAD') {
      head += `Content-Length: ${bodyLength}\r\n`;
    }
    return head + '\r\n';
  }

  /** The response is written: close, or go on with the next pipelined request. */
  private finish(keepAlive: boolean): void {
    this.current = null;
    this.served++;
    this.lastActive = this.front.tick;
    if (!keepAlive) {
      this.end();
      return;
    }
    if (this.socket.isPaused() && !this.socket.writableNeedDrain) this.socket.resume();
    if (!this.processing) this.process();
  }

  private end(): void {
    this.done = true;
    this.buffered = null;
    this.socket.end();
  }

  // ---- timeouts and close -------------------------------------------------------------------------

  checkTimeouts(tick: number, headersTicks: number, idleTicks: number): void {
    if (this.done || this.current !== null) return;
    if (this.buffered !== null) {
      // A head has begun and is not complete: node:http answers 408 after headersTimeout.
      if (headersTicks > 0 && tick - this.headStarted > headersTicks) {
        this.done = true;
        this.socket.end(REQUEST_TIMEOUT_RESPONSE, 'latin1');
      }
      return;
    }
    // Nothing pending: a new connection gets headersTimeout for its first request, a used one keepAliveTimeout.
    const limit = this.served === 0 ? headersTicks : idleTicks;
    if (limit > 0 && tick - this.lastActive > limit) {
      this.done = true;
      this.socket.destroy();
    }
  }

  closeIfIdle(): void {
    if (this.current === null && this.buffered === null && !this.done) {
      this.done = true;
      this.socket.destroy();
    }
  }
}
