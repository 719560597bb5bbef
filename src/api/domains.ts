// Custom domains (spec "Custom domains"): /api/v1/domains[/:domain[/verify]], and the TLS front end's
// question GET /internal/tls-ask?domain= (CONTRACT "Custom domains").

import { type Static, Type } from 'typebox';
import { PENDING_DOMAIN_TTL_MS } from '../core/domains.js';
import { ERRORS, errorExample, NullableString, operation, SECURITY } from './common.js';
import { at, domain, later, unauthorized } from './examples.js';

const MS_PER_DAY = 86_400_000;

/** An answer whose status says it all. */
const NoBody = (description: string) => Type.Unsafe<undefined>({ description, type: 'null' });

export const DomainParams = Type.Object({ domain: Type.String({ maxLength: 300 }) });

export const DomainBody = Type.Object({
  domain: Type.String({ description: 'a hostname such as www.example.com (IDN allowed)' }),
});
export type DomainBody = Static<typeof DomainBody>;

export const DnsRecord = Type.Object({
  type: Type.Union([Type.Literal('CNAME'), Type.Literal('TXT')]),
  name: Type.String(),
  value: Type.String(),
  note: Type.String(),
});
export type DnsRecord = Static<typeof DnsRecord>;

export const DomainAdded = Type.Object({
  domain: Type.String(),
  status: Type.Literal('pending'),
  dns: Type.Object({ instructions: Type.String(), records: Type.Array(DnsRecord) }),
  message: Type.String(),
});
export type DomainAdded = Static<typeof DomainAdded>;

export const DomainVerification = Type.Object({
  domain: Type.String(),
  status: Type.String(),
  verified: Type.Boolean(),
  message: Type.String(),
});
export type DomainVerification = Static<typeof DomainVerification>;

export const Domain = Type.Object({
  domain: Type.String(),
  status: Type.String(),
  sslStatus: Type.String({
    description:
      'pending (not verified), provisioning (verified, its certificate not served yet), active (its certificate is served)',
  }),
  sslError: Type.Optional(
    Type.String({
      description:
        'Why the last attempt to obtain its certificate failed (only while it has none; retried with backoff)',
    }),
  ),
  isApex: Type.Boolean(),
  verificationTxtName: Type.String(),
  verificationTxtValue: Type.String(),
  createdAt: Type.String(),
  verifiedAt: NullableString,
});
export type Domain = Static<typeof Domain>;
export const DomainList = Type.Object({ domains: Type.Array(Domain), total: Type.Number() });
export type DomainList = Static<typeof DomainList>;

export const DomainDeleted = Type.Object({ domain: Type.String(), deleted: Type.Literal(true) });
export type DomainDeleted = Static<typeof DomainDeleted>;

const txtName = `_service.${domain}`;
const txtValue = 'service-verify=54830302f0c2d8f844608dd47bc55dbb';

export const addDomain = operation({
  method: 'POST',
  url: '/api/v1/domains',
  schema: {
    tags: ['domains'],
    summary: `Add a custom domain (Free 1, Hobby 5): returns the DNS records to create; unverified after ${PENDING_DOMAIN_TTL_MS / MS_PER_DAY} days, it is removed`,
    security: SECURITY,
    body: DomainBody,
    response: { 201: DomainAdded, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        request: { domain },
        responses: {
          201: {
            domain,
            status: 'pending',
            dns: {
              instructions: `At your DNS provider, add the records below for ${domain}, then call POST /api/v1/domains/${domain}/verify. DNS changes can take up to 48 hours to propagate; verify may be retried.`,
              records: [
                {
                  type: 'CNAME',
                  name: domain,
                  value: c.cnameTarget,
                  note: `Points ${domain} at this service.`,
                },
                { type: 'TXT', name: txtName, value: txtValue, note: 'Proves that you control the domain.' },
              ],
            },
            message: `${domain} was added; it is served once verified.`,
          },
        },
        error: errorExample(
          'PLAN_LIMIT',
          403,
          'The free plan allows 1 custom domain.',
          'Upgrade to Hobby for 5 domains.',
        ),
      }),
    },
  },
});

export const verifyDomain = operation({
  method: 'POST',
  url: '/api/v1/domains/:domain/verify',
  schema: {
    tags: ['domains'],
    summary:
      'Look up the TXT and CNAME (apex: A/AAAA) records; active when both are right. The first account to verify a domain gets it; pending entries of others are removed (404 says so)',
    security: SECURITY,
    params: DomainParams,
    response: { 200: DomainVerification, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: { domain, status: 'active', verified: true, message: `${domain} is verified and active.` },
        },
        error: errorExample(
          'NOT_FOUND',
          404,
          `Domain "${domain}" was verified by another account, whose token its DNS TXT record holds; pending entries of other accounts for it were removed.`,
        ),
      }),
    },
  },
});

export const listDomains = operation({
  method: 'GET',
  url: '/api/v1/domains',
  schema: {
    tags: ['domains'],
    summary: 'Your custom domains',
    security: SECURITY,
    response: { 200: DomainList, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: {
            domains: [
              {
                domain,
                status: 'active',
                sslStatus: 'active',
                isApex: false,
                verificationTxtName: txtName,
                verificationTxtValue: txtValue,
                createdAt: at,
                verifiedAt: later,
              },
            ],
            total: 1,
          },
        },
        error: unauthorized,
      }),
    },
  },
});

export const deleteDomain = operation({
  method: 'DELETE',
  url: '/api/v1/domains/:domain',
  schema: {
    tags: ['domains'],
    summary: 'Remove a domain and its links (it stops serving at once)',
    security: SECURITY,
    params: DomainParams,
    response: { 200: DomainDeleted, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { domain, deleted: true } },
        error: errorExample('NOT_FOUND', 404, `Domain "${domain}" not found`),
      }),
    },
  },
});

export const tlsAsk = operation({
  method: 'GET',
  url: '/internal/tls-ask',
  schema: {
    tags: ['ops'],
    summary: 'For a TLS front end (Caddy on_demand_tls ask): 200 if a certificate may be issued for ?domain=',
    querystring: Type.Object({ domain: Type.Optional(Type.String({ maxLength: 300 })) }),
    // No body either way: the status is the answer.
    response: {
      200: NoBody('A certificate may be issued for this host'),
      404: NoBody('Not a host this service serves: no certificate'),
    },
  },
  config: { api: { examples: () => ({ responses: {} }) } },
});
