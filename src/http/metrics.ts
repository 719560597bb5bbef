// Prometheus metrics (prom-client), one registry per app so tests can build several apps.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { FastPathStats } from '../serve/http1/connection.js';

export interface Metrics {
  registry: Registry;
  /**
   * What GET /metrics answers: this registry's text, or, in one of a node's WORKERS, every worker's
   * metrics added up by the primary (each scrape reaches one worker).
   */
  scrape(): Promise<string>;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
}

export function createMetrics(nodeScrape?: () => Promise<string>): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  return {
    registry,
    scrape: nodeScrape ?? (() => registry.metrics()),
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

/** The site fast path's counters and gauges, read at scrape time (no per-request prom-client work). */
export function registerFastPathMetrics(metrics: Metrics, stats: () => FastPathStats): void {
  const counter = (name: string, help: string, read: (s: FastPathStats) => number) => {
    let reported = 0;
    new Counter({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        const now = read(stats());
        this.inc(now - reported);
        reported = now;
      },
    });
  };
  const gauge = (name: string, help: string, read: (s: FastPathStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read(stats()));
      },
    });
  counter(
    'slipway_site_fast_path_requests_total',
    'Site requests answered by the fast path (the rest go through node:http)',
    (s) => s.requests,
  );
  counter(
    'slipway_site_fast_path_handoffs_total',
    'Connections the fast path handed to node:http (API host, bodies, unusual requests)',
    (s) => s.handedOff,
  );
  counter(
    'slipway_site_fast_path_memo_hits_total',
    'Fast-path requests answered from the response memo',
    (s) => s.memoHits,
  );
  gauge(
    'slipway_site_fast_path_connections',
    'Open connections held by the site fast path',
    (s) => s.connections,
  );
  gauge(
    'slipway_site_fast_path_memo_bytes',
    'Memory held by memoized site responses (part of SERVE_CACHE_MB, shared with the site caches)',
    (s) => s.memoBytes,
  );
}
