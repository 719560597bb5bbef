// Shared client of the serving tests: requests to a site host of the test app, returning status, headers, bytes.

import { rawRequest, type TestApp } from '../helpers/app.js';
import { siteHost } from '../helpers/seed.js';

export interface SiteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  header(name: string): string | undefined;
}

export async function siteRequest(
  t: TestApp,
  slug: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<SiteResponse> {
  return hostRequest(t, siteHost(slug, t.port), path, options);
}

export async function hostRequest(
  t: TestApp,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<SiteResponse> {
  const res = await rawRequest(t.port, { host, path, ...options });
  return {
    ...res,
    text: res.body.toString('utf8'),
    header(name: string) {
      const v = res.headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}
