// The site server's Prometheus metrics: responses by status and cache memory. Requests only bump a slot of
// a Float64Array; prom-client reads the counts at scrape time, so serving does no prom-client work.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { SiteCatalog } from './catalog.js';

/** Slots of the response counter: one per status code (a status indexes its slot directly). */
export const STATUS_SLOTS = 600;

/** A counter per status code, bumped by the site server as it answers (`responses[status] += 1`). */
export function newResponseCounts(): Float64Array {
  return new Float64Array(STATUS_SLOTS);
}

/** Registers `slipway_site_responses_total` and `slipway_site_cache_bytes`, read at scrape time. */
export function registerSiteMetrics(registry: Registry, catalog: SiteCatalog, responses: Float64Array): void {
  const reported = new Float64Array(responses.length);
  new Counter({
    name: 'slipway_site_responses_total',
    help: 'Responses of the site server by status',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      for (let status = 100; status < responses.length; status++) {
        const delta = responses[status]! - reported[status]!;
        if (delta > 0) this.inc({ status: String(status) }, delta);
        reported[status] = responses[status]!;
      }
    },
  });
  new Gauge({
    name: 'slipway_site_cache_bytes',
    help: 'Memory held by the site server caches (bounded by SERVE_CACHE_MB)',
    labelNames: ['cache'],
    registers: [registry],
    collect() {
      const s = catalog.stats();
      this.set({ cache: 'hosts' }, s.hosts);
      this.set({ cache: 'sites' }, s.sites);
      this.set({ cache: 'bodies' }, s.bodies);
      this.set({ cache: 'responses' }, s.responses);
      this.set({ cache: 'limit' }, s.limit);
    },
  });
}
