// Prometheus metrics (prom-client), one registry per app so tests can build several apps.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  return {
    registry,
    requests: new Counter({
      name: 'slipway_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'slipway_http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
  };
}

/** Records one finished request. `route` is the route pattern (never the raw URL: bounded labels). */
export function observeRequest(
  metrics: Metrics,
  method: string,
  route: string,
  status: number,
  seconds: number,
) {
  const labels = { method, route, status: String(status) };
  metrics.requests.inc(labels);
  metrics.duration.observe(labels, seconds);
}

/** The site fast path's counters (src/serve/http1/connection.ts), read at scrape time. */
export function registerFastPathMetrics(
  metrics: Metrics,
  stats: () => {
    connections: number;
    requests: number;
    handedOff: number;
    memoHits: number;
    memoBytes: number;
  },
): void {
  let requests = 0;
  let handedOff = 0;
  let memoHits = 0;
  new Counter({
    name: 'slipway_site_fast_path_requests_total',
    help: 'Site requests answered by the fast path (the rest go through node:http)',
    registers: [metrics.registry],
    collect() {
      const now = stats().requests;
      this.inc(now - requests);
      requests = now;
    },
  });
  new Counter({
    name: 'slipway_site_fast_path_handoffs_total',
    help: 'Connections the fast path handed to node:http (API host, bodies, unusual requests)',
    registers: [metrics.registry],
    collect() {
      const now = stats().handedOff;
      this.inc(now - handedOff);
      handedOff = now;
    },
  });
  new Gauge({
    name: 'slipway_site_fast_path_connections',
    help: 'Open connections held by the site fast path',
    registers: [metrics.registry],
    collect() {
      this.set(stats().connections);
    },
  });
  new Counter({
    name: 'slipway_site_fast_path_memo_hits_total',
    help: 'Fast-path requests answered from the response memo',
    registers: [metrics.registry],
    collect() {
      const now = stats().memoHits;
      this.inc(now - memoHits);
      memoHits = now;
    },
  });
  new Gauge({
    name: 'slipway_site_fast_path_memo_bytes',
    help: 'Memory held by memoized site responses (an eighth of SERVE_CACHE_MB at most)',
    registers: [metrics.registry],
    collect() {
      this.set(stats().memoBytes);
    },
  });
}
