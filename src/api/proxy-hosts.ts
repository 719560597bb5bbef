// The proxy host allowlist (spec "Proxy host allowlist"): GET/PUT /api/v1/publish/:slug/proxy-hosts,
// DELETE .../proxy-hosts/:hostname.

import { type Static, Type } from 'typebox';
import { MAX_PROXY_HOSTS_PER_SITE } from '../core/proxy-hosts.js';
import { ERRORS, errorExample, operation, SECURITY, Slug, SlugParams, Timestamp } from './common.js';
import { at, siteMissing, slug } from './examples.js';
import { Removed, Stored } from './variables.js';

export const ProxyHostsBody = Type.Object({
  hosts: Type.Array(
    Type.String({ description: 'exact hostname: no scheme, port, path or wildcard; IDN allowed' }),
    {
      minItems: 1,
      maxItems: MAX_PROXY_HOSTS_PER_SITE,
      description: `hostnames to add (the others are kept); at most ${MAX_PROXY_HOSTS_PER_SITE} per site`,
    },
  ),
});
export type ProxyHostsBody = Static<typeof ProxyHostsBody>;

export const ProxyHostInfo = Type.Object({
  hostname: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProxyHostInfo = Static<typeof ProxyHostInfo>;
export const ProxyHostList = Type.Object({ hosts: Type.Array(ProxyHostInfo) });
export type ProxyHostList = Static<typeof ProxyHostList>;

export const listProxyHosts = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/proxy-hosts',
  schema: {
    tags: ['proxy-hosts'],
    summary: 'Hostnames the site proxy may call for this site',
    security: SECURITY,
    params: SlugParams,
    response: { 200: ProxyHostList, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { hosts: [{ hostname: 'api.openai.com', createdAt: at, updatedAt: at }] } },
        error: siteMissing,
      }),
    },
  },
});

export const putProxyHosts = operation({
  method: 'PUT',
  url: '/api/v1/publish/:slug/proxy-hosts',
  schema: {
    tags: ['proxy-hosts'],
    summary: 'Allow exact HTTPS hostnames (no wildcard, scheme, port, path or IP); others are kept',
    security: SECURITY,
    params: SlugParams,
    body: ProxyHostsBody,
    response: { 200: Stored, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { hosts: ['api.openai.com'] },
        responses: { 200: { ok: true, stored: ['api.openai.com'] } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'Invalid proxy host: "*.openai.com" is a wildcard; list each exact hostname.',
        ),
      }),
    },
  },
});

export const deleteProxyHost = operation({
  method: 'DELETE',
  url: '/api/v1/publish/:slug/proxy-hosts/:hostname',
  schema: {
    tags: ['proxy-hosts'],
    summary: 'Remove one hostname',
    security: SECURITY,
    params: Type.Object({ slug: Slug, hostname: Type.String({ maxLength: 300 }) }),
    response: { 200: Removed, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { ok: true, deleted: 'api.openai.com' } },
        error: errorExample('NOT_FOUND', 404, `Site "${slug}" has no proxy host "api.openai.com".`),
      }),
    },
  },
});
