// The OpenAPI document at /api/openapi.json (rendered at /docs): @fastify/swagger's options, and the
// examples of every documented operation. The route schemas (in each resource's file) stay the source
// of the shapes; this file adds what a reader needs beside them: a request and a response example per
// operation, an error example, and the documented shape of the few bodies that core checks entry by
// entry (validated there so the API and the dashboard refuse with the same message).
// test/http/openapi.test.ts checks that every operation has its examples and that they fit the schemas.

import type { SwaggerOptions } from '@fastify/swagger';
import { Type } from 'typebox';
import { ErrorBody, NullableString } from './schemas.js';

export interface OpenApiConfig {
  baseUrl: string;
  siteDomain: string;
  scheme: string;
  cnameTarget: string;
}

/** One operation's examples: the request body, the answer per success status, the typical refusal. */
interface OperationExamples {
  request?: unknown;
  responses: Record<number, unknown>;
  error?: { error: string; code: string; status: number; hint?: string; [extra: string]: unknown };
}

/** Bodies core checks entry by entry (route schema: `Unknown`): their documented shape. */
const DOCUMENTED_BODIES: Record<string, unknown> = {
  'PUT /api/v1/publish/:slug/variables': Type.Record(
    Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' }),
    Type.String({ minLength: 1, maxLength: 8192 }),
    { description: 'Variable name -> secret value. At most 100 per site; values are never returned.' },
  ),
  'PUT /api/v1/publish/:slug/proxy-hosts': Type.Object({
    hosts: Type.Array(Type.String({ description: 'exact hostname: no scheme, port, path or wildcard' }), {
      maxItems: 50,
    }),
  }),
  'PUT /api/v1/handle': Type.Object({
    handle: Type.String({
      minLength: 3,
      maxLength: 30,
      pattern: '^(?!.*--)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$',
      description: 'lowercase letters, digits and single hyphens (no "--"), not at either end',
    }),
  }),
  'POST /api/v1/domains': Type.Object({
    domain: Type.String({ maxLength: 253, description: 'a hostname such as www.example.com (IDN allowed)' }),
  }),
  'POST /api/v1/links': Type.Object({
    slug: Type.String(),
    domain: Type.Optional(
      Type.String({ description: 'an active custom domain of yours; omitted: your handle' }),
    ),
    location: Type.Optional(Type.String({ description: 'path prefix, default "/"' })),
  }),
  'POST /api/v1/proxy/:slug': Type.Object({
    url: Type.String({ description: 'https URL on an allowlisted host; may hold {{NAME}}' }),
    method: Type.Optional(Type.String({ description: 'default GET' })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    body: Type.Optional(NullableString),
  }),
  'POST /api/billing/webhook': Type.Object(
    {
      event: Type.String({ description: 'e.g. subscription.activated, subscription.charged' }),
      created_at: Type.Optional(Type.Number()),
      payload: Type.Object({
        subscription: Type.Object({
          entity: Type.Object({ id: Type.String(), current_end: Type.Optional(Type.Number()) }),
        }),
      }),
    },
    { additionalProperties: true, description: "Razorpay's event body, signed with X-Razorpay-Signature" },
  ),
};

/** Bodies that are not JSON: their media type. */
const RAW_BODIES: Record<string, { type: string; description: string }> = {
  'PUT /api/v1/_upload/*': {
    type: 'application/octet-stream',
    description: "The file's exact bytes, sent with the Content-Type of its upload entry",
  },
};

/** Answers of routes without a response schema (nothing to serialize): what they are. */
const DOCUMENTED_RESPONSES: Record<string, Record<string, unknown>> = {
  'POST /api/v1/proxy/:slug': {
    200: {
      description: "The upstream's status, headers and body as they came (any 1xx-5xx status)",
      content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
    },
    '4xx': ErrorBody,
    '5xx': ErrorBody,
  },
  'GET /internal/tls-ask': {
    200: { description: 'A certificate may be issued for this host', type: 'null' },
    404: { description: 'Not a host this service serves: no certificate', type: 'null' },
  },
};

const err = (code: string, status: number, error: string, hint?: string) => ({
  error,
  code,
  status,
  ...(hint ? { hint } : {}),
});

/** The examples, with this server's own addresses. */
export function operationExamples(c: OpenApiConfig): Record<string, OperationExamples> {
  const base = c.baseUrl;
  const slug = 'mellow-fern-vjn3ru';
  const siteUrl = `${c.scheme}://${slug}.${c.siteDomain}/`;
  const versionId = 'ver_vQl5PqpRwhz6RbutQ8KuVQ';
  const at = '2026-11-24T09:30:00.000Z';
  const later = '2026-11-25T09:30:00.000Z';
  const hash = 'b5d4045c3f466fa91fe2cc6abe79232a1a57cdf104f7a26e716e0a1e2789df78';
  const key = 'svc_live_995ae26666e8074a088f08d2a5f7cf56';
  const unauthorized = err(
    'UNAUTHORIZED',
    401,
    'Missing or invalid API key',
    'Send Authorization: Bearer <API key>; sign in with /api/auth/agent/request-code to get one.',
  );
  const siteMissing = err('NOT_FOUND', 404, `Site "${slug}" not found`);
  const upload = {
    versionId,
    uploads: [
      {
        path: 'index.html',
        method: 'PUT',
        url: `${base}/api/v1/_upload/${versionId}%2Findex.html?token=DpDp6szx0uBw93W02rup-objuODgKh3t1xwsHiUac0s&ct=text%2Fhtml&exp=1795492520`,
        headers: { 'Content-Type': 'text/html' },
      },
    ],
    skipped: [{ path: 'logo.png', reason: 'hash_match' }],
    finalizeUrl: `${base}/api/v1/publish/${slug}/finalize`,
    expiresInSeconds: 3600,
  };
  const manifest = {
    files: [
      { path: 'index.html', size: 1024, contentType: 'text/html', hash },
      {
        path: 'logo.png',
        size: 4096,
        contentType: 'image/png',
        hash: '9f2c1a7e0b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6',
      },
    ],
  };
  const domain = 'www.example.com';
  const txtName = `_service.${domain}`;
  const txtValue = 'service-verify=54830302f0c2d8f844608dd47bc55dbb';
  const link = {
    id: 'lnk_Xr4bq2Lw9sTn',
    slug,
    handle: 'ada',
    location: '/blog',
    url: `${c.scheme}://ada.${c.siteDomain}/blog`,
    createdAt: at,
  };

  return {
    'POST /api/auth/agent/request-code': {
      request: { email: 'ada@example.com' },
      responses: {
        200: {
          message: 'A sign-in code was sent to ada@example.com.',
          email: 'ada@example.com',
          expiresInSeconds: 600,
        },
      },
      error: err(
        'INVALID_REQUEST',
        400,
        '"ada@" is not a valid email address',
        'Send {"email": "you@example.com"}.',
      ),
    },
    'POST /api/auth/agent/verify-code': {
      request: { email: 'ada@example.com', code: 'K7QD-3MXP' },
      responses: {
        200: {
          message: 'Signed in.',
          apiKey: key,
          email: 'ada@example.com',
          plan: 'hobby',
          isNewUser: false,
          warning:
            'Store this API key now: it is shown only once. Verifying again issues a new key and the old one stops working.',
        },
        201: {
          message: 'Account created; you are signed in.',
          apiKey: key,
          email: 'ada@example.com',
          plan: 'free',
          isNewUser: true,
          warning:
            'Store this API key now: it is shown only once. Verifying again issues a new key and the old one stops working.',
        },
      },
      error: err(
        'INVALID_REQUEST',
        400,
        'Wrong or expired code; request a new one if it has expired or after 5 wrong tries.',
      ),
    },
    'GET /api/v1/account': {
      responses: {
        200: {
          email: 'ada@example.com',
          plan: 'free',
          handle: null,
          usage: {
            sites: { used: 3, limit: 500 },
            storage: { used: '1.2 MB', usedBytes: 1258291, limit: '200 MB', limitBytes: 209715200 },
          },
          limits: { maxFileSize: '200 MB', maxFileSizeBytes: 209715200, maxSites: 500, maxStorage: '200 MB' },
          createdAt: at,
        },
      },
      error: unauthorized,
    },
    'POST /api/v1/publish': {
      request: { files: [{ path: 'index.html', size: 1024, contentType: 'text/html', hash }] },
      responses: {
        201: {
          slug,
          siteUrl,
          upload: { ...upload, skipped: [] },
          claimToken: 'clm_a61b269e23edbaf86ee763152982d5ab59331ee6cdd90d99',
          claimUrl: `${base}/claim?slug=${slug}&token=clm_a61b269e23edbaf86ee763152982d5ab59331ee6cdd90d99`,
          expiresAt: later,
          anonymous: true,
          warning:
            'Anonymous site: it expires in 24 hours. Store the claimToken now (it is shown once) and claim the site into an account to keep it.',
        },
      },
      error: err('INVALID_PATH', 400, 'files[0] ("../secret.txt"): path must not contain a ".." segment'),
    },
    'PUT /api/v1/publish/:slug': {
      request: { ...manifest, baseVersionId: 'ver_k31-KdArE_QuvHal2oJDeg' },
      responses: { 200: { slug, siteUrl, upload } },
      error: siteMissing,
    },
    'POST /api/v1/publish/:slug/finalize': {
      request: { versionId },
      responses: { 200: { slug, siteUrl, versionId, status: 'active', warnings: [] } },
      error: {
        ...err(
          'SECRET_DETECTED',
          400,
          'Publishing stopped: 1 exposed secret found in 1 file (stripe_secret_key in app.js line 1). The site did not go live.',
          'Move the secrets into site variables and call their APIs through the site proxy (see remediation.steps).',
        ),
        detectedSecrets: [
          {
            path: 'app.js',
            type: 'stripe_secret_key',
            line: 1,
            suggestedVariableName: 'STRIPE_SECRET_KEY',
            suggestedProxyHosts: ['api.stripe.com'],
          },
        ],
        remediation: {
          suggestedVariableNames: ['STRIPE_SECRET_KEY'],
          suggestedProxyHosts: ['api.stripe.com'],
          steps: [
            'Ask the site owner for permission before changing anything; if they refuse, do not publish the site.',
            '…',
          ],
        },
      },
    },
    'GET /api/v1/publish/:slug': {
      responses: {
        200: {
          slug,
          siteUrl,
          status: 'active',
          versionId,
          title: 'My portfolio',
          description: null,
          ogImagePath: null,
          hasPassword: false,
          createdAt: at,
          updatedAt: at,
          expiresAt: null,
          files: [{ path: 'index.html', size: 1024, contentType: 'text/html', hash }],
        },
      },
      error: siteMissing,
    },
    'DELETE /api/v1/publish/:slug': { responses: { 200: { slug, deleted: true } }, error: siteMissing },
    'GET /api/v1/publishes': {
      responses: {
        200: {
          sites: [
            {
              slug,
              siteUrl,
              status: 'active',
              title: 'My portfolio',
              fileCount: 2,
              totalSize: 5120,
              createdAt: at,
              updatedAt: at,
              expiresAt: null,
            },
          ],
          total: 1,
          nextCursor: null,
        },
      },
      error: unauthorized,
    },
    'POST /api/v1/publish/:slug/duplicate': {
      responses: {
        201: {
          slug: 'quiet-river-8d2kqa',
          siteUrl: `${c.scheme}://quiet-river-8d2kqa.${c.siteDomain}/`,
          versionId: 'ver_Zt0mQ1uE4pHk7yBn2LcVxw',
          copiedFrom: slug,
          status: 'active',
        },
      },
      error: siteMissing,
    },
    'POST /api/v1/publish/:slug/claim': {
      request: { claimToken: 'clm_a61b269e23edbaf86ee763152982d5ab59331ee6cdd90d99' },
      responses: {
        200: {
          slug,
          siteUrl,
          owner: 'ada@example.com',
          message: 'The site is yours: it no longer expires and appears in your site list.',
        },
      },
      error: err('INVALID_REQUEST', 400, 'The claim token is not valid for this site'),
    },
    'PATCH /api/v1/publish/:slug/metadata': {
      request: { title: 'My portfolio', password: 'correct horse battery', ttlSeconds: 604800 },
      responses: { 200: { slug, updated: true } },
      error: siteMissing,
    },
    'GET /api/v1/publish/:slug/versions': {
      responses: {
        200: {
          versions: [
            { versionId, createdAt: later, finalizedAt: later, fileCount: 2, totalSize: 5120, current: true },
            {
              versionId: 'ver_k31-KdArE_QuvHal2oJDeg',
              createdAt: at,
              finalizedAt: at,
              fileCount: 1,
              totalSize: 1024,
              current: false,
            },
          ],
        },
      },
      error: siteMissing,
    },
    'POST /api/v1/publish/:slug/versions/:versionId/restore': {
      responses: { 200: { slug, siteUrl, versionId: 'ver_k31-KdArE_QuvHal2oJDeg', status: 'active' } },
      error: err('NOT_FOUND', 404, `Version ver_k31-KdArE_QuvHal2oJDeg of site "${slug}" not found`),
    },
    'PUT /api/v1/_upload/*': {
      responses: { 200: { path: 'index.html', size: 1024, hash, stored: true } },
      error: err('INVALID_REQUEST', 400, 'The body has 1000 bytes; the manifest says 1024 for "index.html".'),
    },
    'GET /api/v1/publish/:slug/variables': {
      responses: { 200: { variables: [{ name: 'OPENAI_API_KEY', createdAt: at, updatedAt: at }] } },
      error: siteMissing,
    },
    'PUT /api/v1/publish/:slug/variables': {
      request: { OPENAI_API_KEY: 'sk-proj-…' },
      responses: { 200: { ok: true, stored: ['OPENAI_API_KEY'] } },
      error: err(
        'INVALID_REQUEST',
        400,
        'Invalid variable: variable name "1KEY" must start with a letter and contain only letters, digits and underscores.',
      ),
    },
    'DELETE /api/v1/publish/:slug/variables/:name': {
      responses: { 200: { ok: true, deleted: 'OPENAI_API_KEY' } },
      error: err('NOT_FOUND', 404, `Site "${slug}" has no variable "OPENAI_API_KEY".`),
    },
    'GET /api/v1/publish/:slug/proxy-hosts': {
      responses: { 200: { hosts: [{ hostname: 'api.openai.com', createdAt: at, updatedAt: at }] } },
      error: siteMissing,
    },
    'PUT /api/v1/publish/:slug/proxy-hosts': {
      request: { hosts: ['api.openai.com'] },
      responses: { 200: { ok: true, stored: ['api.openai.com'] } },
      error: err(
        'INVALID_REQUEST',
        400,
        'Invalid proxy host: "*.openai.com" is a wildcard; list each exact hostname.',
      ),
    },
    'DELETE /api/v1/publish/:slug/proxy-hosts/:hostname': {
      responses: { 200: { ok: true, deleted: 'api.openai.com' } },
      error: err('NOT_FOUND', 404, `Site "${slug}" has no proxy host "api.openai.com".`),
    },
    'POST /api/v1/proxy/:slug': {
      request: {
        url: 'https://api.openai.com/v1/chat/completions',
        method: 'POST',
        headers: { Authorization: 'Bearer {{OPENAI_API_KEY}}', 'Content-Type': 'application/json' },
        body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}',
      },
      responses: {},
      error: err(
        'FORBIDDEN',
        403,
        'The site proxy is disabled on this deployment (PROXY_ENABLED=false); nothing was forwarded.',
      ),
    },
    'POST /api/billing/checkout': {
      responses: {
        200: {
          subscriptionId: 'sub_test_LIgkvRdiDfv-',
          paymentKeyId: 'test_key_slipway',
          shortUrl: `${base}/billing/test-checkout/xm1RjJuttzw25wfNlSd-TKhHVtSsIxel4Qb0vYf7Zk2`,
          checkoutUrl: `${base}/billing/test-checkout/xm1RjJuttzw25wfNlSd-TKhHVtSsIxel4Qb0vYf7Zk2`,
        },
      },
      error: err(
        'INVALID_REQUEST',
        400,
        'This account is already on the Hobby plan.',
        'POST /api/billing/portal manages it.',
      ),
    },
    'POST /api/billing/portal': {
      responses: {
        200: { portalUrl: `${base}/billing/portal?token=…`, status: 'active', currentEnd: later },
      },
      error: err(
        'INVALID_REQUEST',
        400,
        'This account has no subscription to manage.',
        'POST /api/billing/checkout starts one.',
      ),
    },
    'POST /api/billing/webhook': {
      request: {
        entity: 'event',
        event: 'subscription.charged',
        created_at: 1795512600,
        payload: { subscription: { entity: { id: 'sub_Nq2b8Yc4LkP0aZ', current_end: 1798104600 } } },
      },
      responses: { 200: { ok: true } },
      error: err('INVALID_REQUEST', 400, 'Bad or missing X-Razorpay-Signature; nothing was changed.'),
    },
    'GET /api/v1/handle': {
      responses: { 200: { handle: 'ada', url: `${c.scheme}://ada.${c.siteDomain}/` } },
      error: unauthorized,
    },
    'PUT /api/v1/handle': {
      request: { handle: 'ada' },
      responses: {
        200: {
          handle: 'ada',
          url: `${c.scheme}://ada.${c.siteDomain}/`,
          message: 'Your handle is ada: link sites to it with POST /api/v1/links.',
        },
      },
      error: err(
        'PLAN_LIMIT',
        403,
        'Handles are part of the Hobby plan.',
        'Upgrade with POST /api/billing/checkout.',
      ),
    },
    'DELETE /api/v1/handle': {
      responses: { 200: { deleted: true, message: 'The handle ada was released and its links removed.' } },
      error: err('NOT_FOUND', 404, 'This account has no handle.'),
    },
    'POST /api/v1/domains': {
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
      error: err(
        'PLAN_LIMIT',
        403,
        'The free plan allows 1 custom domain.',
        'Upgrade to Hobby for 5 domains.',
      ),
    },
    'GET /api/v1/domains': {
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
    },
    'POST /api/v1/domains/:domain/verify': {
      responses: {
        200: { domain, status: 'active', verified: true, message: `${domain} is verified and active.` },
      },
      error: err(
        'NOT_FOUND',
        404,
        `Domain "${domain}" was verified by another account, whose token its DNS TXT record holds; pending entries of other accounts for it were removed.`,
      ),
    },
    'DELETE /api/v1/domains/:domain': {
      responses: { 200: { domain, deleted: true } },
      error: err('NOT_FOUND', 404, `Domain "${domain}" not found`),
    },
    'GET /api/v1/links': { responses: { 200: { links: [link] } }, error: unauthorized },
    'POST /api/v1/links': {
      request: { slug, location: '/blog' },
      responses: { 201: link },
      error: err(
        'INVALID_REQUEST',
        400,
        'This account has no handle: set one with PUT /api/v1/handle, or give a "domain".',
      ),
    },
    'DELETE /api/v1/links/:id': {
      responses: { 200: { id: link.id, deleted: true } },
      error: err('NOT_FOUND', 404, `Link "${link.id}" not found`),
    },
    'GET /readyz': {
      responses: {
        200: { ok: true, database: 'ok', storage: 'ok' },
        503: { ok: false, database: 'ok', storage: 'unreachable' },
      },
    },
    'GET /healthz': { responses: { 200: { ok: true } } },
    'GET /internal/tls-ask': { responses: {} },
  };
}

type Schema = Record<string, unknown>;

/** `examples` added to a copy of a schema (route schemas are shared objects: never mutated). */
const withExample = (schema: unknown, example: unknown): Schema => ({
  ...(schema as Schema),
  examples: [example],
});

/** @fastify/swagger's options: the document's frame, and a transform adding each operation's examples. */
export function openApiOptions(c: OpenApiConfig): SwaggerOptions {
  const examples = operationExamples(c);
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Slipway API',
        version: '1.0.0',
        description:
          'Static-site hosting: publish, manage and serve sites. Errors are {error, code, status} (plus hint and, ' +
          'for SECRET_DETECTED, detectedSecrets and remediation). Every /api/ answer carries X-RateLimit-Limit, ' +
          'X-RateLimit-Remaining and X-RateLimit-Reset.',
      },
      servers: [{ url: c.baseUrl }],
      // The reference's order: the publish flow first, operations last.
      tags: [
        { name: 'auth', description: 'Sign in with an emailed code; get an API key' },
        { name: 'sites', description: 'Publish, update, finalize, list, inspect, copy, claim, delete' },
        { name: 'account', description: 'Plan, usage and limits' },
        { name: 'variables', description: 'Encrypted site variables for the proxy' },
        { name: 'proxy-hosts', description: 'Hosts the site proxy may call' },
        { name: 'proxy', description: 'The site proxy' },
        { name: 'billing', description: 'The Hobby plan' },
        { name: 'handle', description: 'Your <handle> site address (Hobby)' },
        { name: 'domains', description: 'Custom domains, verified by DNS' },
        { name: 'links', description: 'Sites mounted on your handle or domains' },
        { name: 'ops', description: 'Health, readiness, metrics, TLS front end' },
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'svc_live_ API key' } },
      },
    },
    transform({ schema, url, route }) {
      const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
      const id = `${method} ${url}`;
      const ex = examples[id];
      if (!schema || (schema as Schema).hide || !ex) return { schema, url };
      const out: Schema = { ...(schema as Schema) };
      const body = DOCUMENTED_BODIES[id] ?? out.body;
      const raw = RAW_BODIES[id];
      if (raw) {
        out.body = {
          content: {
            [raw.type]: { schema: { type: 'string', format: 'binary', description: raw.description } },
          },
        };
      } else if (body !== undefined && ex.request !== undefined) {
        out.body = withExample(body, ex.request);
      }
      const responses: Schema = { ...((out.response ?? DOCUMENTED_RESPONSES[id]) as Schema | undefined) };
      for (const [status, value] of Object.entries(ex.responses)) {
        if (responses[status]) responses[status] = withExample(responses[status], value);
      }
      for (const range of ['4xx', '5xx']) {
        if (!responses[range]) continue;
        const sample =
          range === '4xx'
            ? ex.error
            : id.startsWith('POST /api/billing/') && id !== 'POST /api/billing/webhook'
              ? err('INTERNAL_ERROR', 500, 'The payment provider call failed; try again shortly.')
              : err(
                  'SERVICE_UNAVAILABLE',
                  503,
                  'The service is briefly unavailable; try again in a few seconds.',
                );
        responses[range] = withExample(responses[range], sample);
      }
      if (Object.keys(responses).length > 0) out.response = responses;
      return { schema: out, url };
    },
  } as SwaggerOptions;
}
