// Cross-node ChangeBus over Redis pub/sub: publish runs local listeners synchronously and fans the change
// out on `<prefix>changes`; after the subscriber reconnects, listeners get {kind:'all'} (messages may be lost).

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ChangeBus, SiteChange } from '../../shared/events.js';
import { closeConnection, openRedis } from '../redis.js';

export interface RedisChangeBusOptions {
  /** Namespace shared by the nodes of one deployment (e.g. `slipway:`); the channel is `<prefix>changes`. */
  prefix: string;
  /** This node's id (shared by its workers); default: random. */
  nodeId?: string;
  logger?: Logger;
}

/** What goes over the wire: the change plus the publishing node, so a node can skip its own messages. */
interface Envelope {
  node: string;
  change: SiteChange;
}

type Listener = (change: SiteChange) => void;

export class RedisChangeBus implements ChangeBus {
  /** Random per instance; tags this node's messages. */
  readonly nodeId: string;
  readonly channel: string;
  private readonly listeners = new Set<Listener>();
  private readonly logger: Logger | undefined;
  private closed = false;
  /** Set when the subscriber connection drops; the next 'ready' resynchronises. */
  private subscriberLost = false;

  /** Connects both connections and subscribes; rejects (leaving nothing open) if Redis is unreachable. */
  static async create(url: string, options: RedisChangeBusOptions): Promise<RedisChangeBus> {
    const nodeId = options.nodeId ?? randomBytes(8).toString('hex');
    const connect = (role: 'pub' | 'sub') =>
      openRedis(url, {
        name: `slipway-changes-${role}-${nodeId}`,
        ...(options.logger ? { logger: options.logger } : {}),
        // The subscriber's SUBSCRIBE waits for its connection; a publish while Redis is away fails at once
        // (the other nodes drop every cache when their subscriber reconnects).
        offlineQueue: role === 'sub',
      });
    const pub = connect('pub');
    const sub = connect('sub');
    try {
      await Promise.all([pub.connect(), sub.connect()]);
      const bus = new RedisChangeBus(pub, sub, nodeId, options);
      await sub.subscribe(bus.channel);
      return bus;
    } catch (err) {
      pub.disconnect();
      sub.disconnect();
      throw err;
    }
  }

  private constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    nodeId: string,
    options: RedisChangeBusOptions,
  ) {
    this.nodeId = nodeId;
    this.channel = `${options.prefix}changes`;
    this.logger = options.logger;
    sub.on('message', (channel: string, message: string) => this.onMessage(channel, message));
    sub.on('close', () => {
      if (this.closed || this.subscriberLost) return;
      this.subscriberLost = true;
      this.logger?.warn('change bus: subscriber disconnected from Redis');
    });
    sub.on('ready', () => this.onSubscriberReady());
  }

  publish(change: SiteChange): Promise<void> {
    if (this.closed) return Promise.resolve();
    const sent = this.send(change);
    // Local listeners run before publish returns, so this node never answers from a stale cache. All of
    // them run even if one throws; the first failure is then rethrown, as LocalChangeBus would.
    const errors = this.dispatch(change);
    if (errors.length > 0) throw errors[0];
    return sent;
  }

  /**
   * Sends `change` to the other nodes only (a node's workers share its id and apply it among themselves).
   * Resolves when Redis has handed it to every subscriber's connection (PUBLISH answers then), so an API
   * answer that awaits it leaves after the other nodes' copies: they apply it as they read their sockets.
   * A Redis that is away is logged, not thrown: the write it follows has committed, and the other nodes
   * drop every cache when their subscriber reconnects.
   */
  async send(change: SiteChange): Promise<void> {
    if (this.closed) return;
    const envelope: Envelope = { node: this.nodeId, change };
    try {
      await this.pub.publish(this.channel, JSON.stringify(envelope));
    } catch (err) {
      this.logger?.error({ err, change }, 'change bus: could not publish to other nodes');
    }
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    if (this.sub.status === 'ready') {
      try {
        await this.sub.unsubscribe(this.channel);
      } catch {
        // quitting below ends the subscription anyway
      }
    }
    await Promise.all([closeConnection(this.sub), closeConnection(this.pub)]);
  }

  private onMessage(channel: string, message: string): void {
    if (this.closed || channel !== this.channel) return;
    const envelope = parseEnvelope(message);
    if (envelope === undefined) {
      this.logger?.warn({ message: message.slice(0, 200) }, 'change bus: ignored a malformed message');
      return;
    }
    if (envelope.node === this.nodeId) return; // already delivered synchronously by publish()
    for (const err of this.dispatch(envelope.change)) {
      this.logger?.error({ err, change: envelope.change }, 'change bus: listener failed');
    }
  }

  private onSubscriberReady(): void {
    if (this.closed || !this.subscriberLost) return;
    this.subscriberLost = false;
    // ioredis re-sends SUBSCRIBE on reconnect; subscribing again (idempotent) and waiting for the reply
    // guarantees the server is delivering again before caches are dropped, so nothing falls in between.
    this.sub.subscribe(this.channel).then(
      () => {
        if (this.closed) return;
        this.logger?.info('change bus: subscriber reconnected; invalidating every cache');
        for (const err of this.dispatch({ kind: 'all' })) {
          this.logger?.error({ err }, 'change bus: listener failed');
        }
      },
      (err: unknown) => {
        // The connection dropped again; its next 'ready' retries.
        this.subscriberLost = true;
        this.logger?.warn({ err }, 'change bus: resubscribe failed');
      },
    );
  }

  /** Calls every listener (a snapshot, so listeners may unsubscribe); returns what they threw. */
  private dispatch(change: SiteChange): unknown[] {
    const errors: unknown[] = [];
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (err) {
        errors.push(err);
      }
    }
    return errors;
  }
}

function parseEnvelope(message: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { node, change } = value as { node?: unknown; change?: unknown };
  if (typeof node !== 'string' || typeof change !== 'object' || change === null) return undefined;
  const c = change as { kind?: unknown; slug?: unknown; host?: unknown; accountId?: unknown };
  if (c.kind === 'site' && typeof c.slug === 'string')
    return { node, change: { kind: 'site', slug: c.slug } };
  if (c.kind === 'host' && typeof c.host === 'string')
    return { node, change: { kind: 'host', host: c.host } };
  if (c.kind === 'account' && typeof c.accountId === 'string')
    return { node, change: { kind: 'account', accountId: c.accountId } };
  if (c.kind === 'all') return { node, change: { kind: 'all' } };
  return undefined;
}
