// `req.clientAddress` on the API host: the client as src/core/client-address.ts decides it from the socket's
// peer and X-Forwarded-For under TRUST_PROXY. Fastify's own `req.ip` is left as the peer (trustProxy off).

import type { FastifyInstance } from 'fastify';
import type { TrustProxy } from '../config.js';
import { clientAddress } from '../core/client-address.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client's address (the rule of src/core/client-address.ts); per-client limits and logs use it. */
    readonly clientAddress: string;
  }
}

export function registerClientAddress(app: FastifyInstance, trust: TrustProxy): void {
  app.decorateRequest('clientAddress', {
    getter() {
      return clientAddress(trust, this.raw.socket?.remoteAddress, this.headers['x-forwarded-for']);
    },
  });
}
