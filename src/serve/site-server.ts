// The site server: answers every request whose Host is not the API host (sites, handles, custom
// domains). This is the hot path; it runs in front of Fastify, on node:http directly.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import type { Metrics } from '../http/metrics.js';
import { notFoundPage } from './pages.js';

export interface SiteServer {
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): void;
}

export function createSiteServer(_ctx: AppContext, _metrics: Metrics): SiteServer {
  return {
    handle(req, res) {
      const body = notFoundPage();
      res.writeHead(404, {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    close() {},
  };
}
