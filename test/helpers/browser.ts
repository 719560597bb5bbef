// Browser harness: Debian's headless Chromium driven by playwright-core (which never downloads a
// browser of its own), with every console error, page error and request to another host recorded.

import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { TestApp } from './app.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CHROMIUM = '/usr/bin/chromium';
/** Where `screenshot(name)` writes (`test-artifacts/` is git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, 'test-artifacts', 'screenshots');

/**
 * The test app listens on 127.0.0.1 only, while Chromium resolves `localhost` and `*.localhost` to
 * ::1 first (falling back after a refused connection): map them to the IPv4 loopback outright.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--host-resolver-rules=MAP localhost 127.0.0.1, MAP *.localhost 127.0.0.1',
];

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface PageOptions {
  /** Viewport width in CSS pixels (default 1280, or 390 with `mobile`). */
  width?: number;
  /** Viewport height in CSS pixels (default 800, or 844 with `mobile`). */
  height?: number;
  /** A phone: isMobile, hasTouch and deviceScaleFactor 2; screenshots are named `-phone`. */
  mobile?: boolean;
  /**
   * Let pages register service workers (default: blocked, because a worker's own requests bypass the
   * foreign-request recorder).
   */
  serviceWorkers?: boolean;
}

export interface BrowserPage {
  /** The playwright page (its own context, so viewports never leak between pages). */
  page: Page;
  context: BrowserContext;
  /** The app's BASE_URL, `http://localhost:<port>` by default. */
  baseUrl: string;
  /** A site's address, `http://<slug>.localhost:<port>` by default. */
  siteUrl(slug: string): string;
  /** Console messages of type error and uncaught page errors, in order. */
  errors: string[];
  /** Requests (aborted) and WebSockets (closed) to any host but the test app's. */
  foreignRequests: string[];
  /** Full-page PNG to `test-artifacts/screenshots/<name>-<desktop|phone>.png`; returns its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export interface BrowserHarness {
  browser: Browser;
  page(t: TestApp, options?: PageOptions): Promise<BrowserPage>;
  close(): Promise<void>;
}

/** Whether a URL stays on the test app: 127.0.0.1, localhost or *.localhost on its port. */
export function isLocalTo(t: TestApp, raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  // Nothing leaves the machine for these schemes.
  if (['data:', 'blob:', 'about:'].includes(url.protocol)) return true;
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) return false;
  if (url.port !== String(t.port)) return false;
  const host = url.hostname.toLowerCase();
  return host === '127.0.0.1' || host === 'localhost' || host.endsWith('.localhost');
}

/** Installs Chromium when missing (scripts/ensure-chromium.sh) and launches it headless. */
export async function startBrowser(): Promise<BrowserHarness> {
  // The script only speaks when it installs ("installing chromium") or fails (one line): pass that on.
  const ensure = spawnSync('bash', [join(ROOT, 'scripts', 'ensure-chromium.sh')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (ensure.status !== 0) {
    const why = ensure.stderr.trim() || ensure.error?.message || `exit ${ensure.status ?? ensure.signal}`;
    throw new Error(`Chromium is not available: ${why}`);
  }
  if (ensure.stderr) process.stderr.write(ensure.stderr);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const contexts = new Set<BrowserContext>();

  return {
    browser,
    async page(t, options = {}) {
      const mobile = options.mobile ?? false;
      const size = mobile ? PHONE : DESKTOP;
      const context = await browser.newContext({
        viewport: { width: options.width ?? size.width, height: options.height ?? size.height },
        ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
        // Service workers fetch past context.route: keep every request where the routes see it.
        serviceWorkers: options.serviceWorkers ? 'allow' : 'block',
      });
      contexts.add(context);
      const errors: string[] = [];
      const foreignRequests: string[] = [];

      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (isLocalTo(t, url)) return route.continue();
        foreignRequests.push(url);
        return route.abort('blockedbyclient');
      });
      await context.routeWebSocket(
        (url) => !isLocalTo(t, url.href),
        (ws) => {
          foreignRequests.push(ws.url());
          return ws.close();
        },
      );

      const page = await context.newPage();
      page.on('console', (msg) => {
        if (msg.type() !== 'error') return;
        const at = msg.location();
        errors.push(`console.error: ${msg.text()}${at.url ? ` (${at.url}:${at.lineNumber})` : ''}`);
      });
      page.on('pageerror', (err) => errors.push(`pageerror: ${err.stack ?? err.message}`));

      return {
        page,
        context,
        baseUrl: t.ctx.config.baseUrl,
        siteUrl: (slug) => `${t.ctx.config.scheme}://${slug}.${t.ctx.config.siteDomain}`,
        errors,
        foreignRequests,
        async screenshot(name) {
          await mkdir(SCREENSHOT_DIR, { recursive: true });
          const path = join(SCREENSHOT_DIR, `${name}-${mobile ? 'phone' : 'desktop'}.png`);
          await page.screenshot({ path, fullPage: true });
          return path;
        },
        async close() {
          contexts.delete(context);
          await context.close();
        },
      };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => {});
      contexts.clear();
      await browser.close();
    },
  };
}
