// `npm run bench:analytics` (issue 25): what visitor counting costs the serving path, in one process and
// without HTTP: nanoseconds per AnalyticsCounter.record() for an asset, a page view, a 404 and a bot; and
// the memory the counters hold with 100,000 sites answered in one flush interval (each one page view from
// a new visitor, one asset and one 404), before and after the flush takes them. Run with --expose-gc for
// steady heap figures (the npm script does).

import { performance } from 'node:perf_hooks';
import { AnalyticsCounter } from '../src/core/analytics.js';
import { systemClock } from '../src/shared/clock.js';

const SITES = Number(process.env.BENCH_ANALYTICS_SITES ?? 100_000);
const N = 2_000_000;
const UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

function perCall(name: string, run: (c: AnalyticsCounter, i: number) => void): void {
  const c = new AnalyticsCounter(systemClock);
  c.setSalt(Date.now() - (Date.now() % 86_400_000), Buffer.alloc(16, 7));
  for (let i = 0; i < 100_000; i++) run(c, i); // warm-up
  const start = performance.now();
  for (let i = 0; i < N; i++) run(c, i);
  const ns = ((performance.now() - start) * 1e6) / N;
  console.log(`  ${name.padEnd(40)} ${ns.toFixed(0).padStart(5)} ns`);
}

const headers = { host: 'demo.localhost', 'user-agent': UA };
const referred = { host: 'demo.localhost', 'user-agent': UA, referer: 'https://news.example.org/item' };
const bot = { host: 'demo.localhost', 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1)' };
console.log('record() per call (one site)');
perCall('asset (200, not HTML)', (c) =>
  c.record('demo', 'h.example', 200, 11_000, '/app.js', false, true, headers, ''),
);
perCall('page view, same visitor', (c) =>
  c.record('demo', 'h.example', 200, 11_000, '/', true, true, headers, '10.0.0.1'),
);
perCall('page view with a referrer', (c) =>
  c.record('demo', 'h.example', 200, 11_000, '/', true, true, referred, '10.0.0.1'),
);
perCall('404', (c) => c.record('demo', 'h.example', 404, 500, '/missing', false, true, headers, ''));
perCall('bot', (c) => c.record('demo', 'h.example', 200, 11_000, '/', true, true, bot, ''));

gc();
const before = process.memoryUsage().heapUsed;
const counter = new AnalyticsCounter(systemClock);
counter.setSalt(Date.now() - (Date.now() % 86_400_000), Buffer.alloc(16, 7));
const slugs = Array.from({ length: SITES }, (_, i) => `site-${i.toString(36)}`);
gc();
const withSlugs = process.memoryUsage().heapUsed;
for (let i = 0; i < SITES; i++) {
  const slug = slugs[i]!;
  counter.record(
    slug,
    `${slug}.h.example`,
    200,
    11_000,
    '/',
    true,
    true,
    headers,
    `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  );
  counter.record(slug, 'h.example', 200, 52_000, '/app.js', false, true, headers, '');
  counter.record(slug, 'h.example', 404, 500, '/missing', false, true, headers, '');
}
gc();
const full = process.memoryUsage().heapUsed;
counter.take();
gc();
const after = process.memoryUsage().heapUsed;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
console.log(`\n${SITES} sites answered in one interval (page view + asset + 404 each):`);
console.log(
  `  counters held: ${mb(full - withSlugs)} (${((full - withSlugs) / SITES).toFixed(0)} bytes a site)`,
);
console.log(
  `  after the flush took them: ${mb(Math.max(0, after - withSlugs))} (slug strings alone: ${mb(withSlugs - before)})`,
);
