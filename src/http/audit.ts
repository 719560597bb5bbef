// Who made a change, resolved once per request for the audit log (core/audit.ts): every route's handler
// runs inside `withAuditCaller`, so a core function that records an entry in its transaction gets the
// actor and the client address without carrying them in its signature.
// The actor: a deploy token (req.deployToken), else a dashboard session (req.webSession, pages only),
// else the API key (req.account); nobody signed in (an anonymous publish, a sign-in) is the system's
// entry, if any is recorded. The address: req.clientAddress (src/http/client-address.ts).

import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { type AuditCaller, keyActor, sessionActor, tokenActor, withAuditCaller } from '../core/audit.js';

export function auditCallerOf(req: FastifyRequest): AuditCaller {
  const ip = req.clientAddress ?? null;
  if (req.deployToken) return { actor: tokenActor(req.deployToken.id), ip };
  if (req.webSession) return { actor: sessionActor(req.webSession.token), ip };
  if (req.account) return { actor: keyActor(req.account), ip };
  return { actor: { kind: 'system' }, ip };
}

/** Wraps every route registered after it (call before the routes) so its handler runs as its caller. */
export function registerAuditCaller(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function (this: unknown, req: FastifyRequest, reply: FastifyReply) {
      return withAuditCaller(auditCallerOf(req), () => handler.call(this as never, req, reply));
    } as RouteHandlerMethod;
  });
}
