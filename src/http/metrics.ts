// Prometheus metrics (prom-client), one registry per app so tests can build several apps.

import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

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
