// Custom domains: /api/v1/domains[/:domain[/verify]] (spec "Custom domains"), and the TLS front end's
// question GET /internal/tls-ask?domain= (CONTRACT "Custom domains"; not under /api/, not rate limited).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { addDomain, type DomainDeps, deleteDomain, listDomains, verifyDomain } from '../core/domains.js';
import { type TlsAskDeps, tlsAllowed } from '../core/tls-ask.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, NullableString, SECURITY } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };
const DomainParams = Type.Object({ domain: Type.String({ maxLength: 300 }) });
const DnsRecord = Type.Object({
  type: Type.Union([Type.Literal('CNAME'), Type.Literal('TXT')]),
  name: Type.String(),
  value: Type.String(),
  note: Type.String(),
});
const Domain = Type.Object({
  domain: Type.String(),
  status: Type.String(),
  sslStatus: Type.String({
    description: 'pending (not verified), provisioning (verified, no certificate asked for yet), active',
  }),
  isApex: Type.Boolean(),
  verificationTxtName: Type.String(),
  verificationTxtValue: Type.String(),
  createdAt: Type.String(),
  verifiedAt: NullableString,
});

export function domainRoutes(deps: DomainDeps & TlsAskDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/domains',
      {
        schema: {
          tags: ['domains'],
          summary:
            'Add a custom domain (Free 1, Hobby 5): returns the DNS records to create; unverified after 7 days, it is removed',
          security: SECURITY,
          body: Type.Object({ domain: Type.Unknown() }),
          response: {
            201: Type.Object({
              domain: Type.String(),
              status: Type.Literal('pending'),
              dns: Type.Object({ instructions: Type.String(), records: Type.Array(DnsRecord) }),
              message: Type.String(),
            }),
            ...errors,
          },
        },
      },
      async (req, reply) => reply.code(201).send(await addDomain(deps, requireAccount(req), req.body.domain)),
    );
    app.post(
      '/api/v1/domains/:domain/verify',
      {
        schema: {
          tags: ['domains'],
          summary:
            'Look up the TXT and CNAME (apex: A/AAAA) records; active when both are right. The first account to verify a domain gets it; pending entries of others are removed (404 says so)',
          security: SECURITY,
          params: DomainParams,
          response: {
            200: Type.Object({
              domain: Type.String(),
              status: Type.String(),
              verified: Type.Boolean(),
              message: Type.String(),
            }),
            ...errors,
          },
        },
      },
      async (req) => verifyDomain(deps, requireAccount(req), req.params.domain),
    );
    app.get(
      '/api/v1/domains',
      {
        schema: {
          tags: ['domains'],
          summary: 'Your custom domains',
          security: SECURITY,
          response: { 200: Type.Object({ domains: Type.Array(Domain), total: Type.Number() }), ...errors },
        },
      },
      async (req) => listDomains(deps, requireAccount(req)),
    );
    app.delete(
      '/api/v1/domains/:domain',
      {
        schema: {
          tags: ['domains'],
          summary: 'Remove a domain and its links (it stops serving at once)',
          security: SECURITY,
          params: DomainParams,
          response: { 200: Type.Object({ domain: Type.String(), deleted: Type.Literal(true) }), ...errors },
        },
      },
      async (req) => deleteDomain(deps, requireAccount(req), req.params.domain),
    );
    app.get(
      '/internal/tls-ask',
      {
        schema: {
          tags: ['ops'],
          summary:
            'For a TLS front end (Caddy on_demand_tls ask): 200 if a certificate may be issued for ?domain=',
          querystring: Type.Object({ domain: Type.Optional(Type.String({ maxLength: 300 })) }),
        },
      },
      async (req, reply) => reply.code((await tlsAllowed(deps, req.query.domain ?? '')) ? 200 : 404).send(),
    );
  };
}
