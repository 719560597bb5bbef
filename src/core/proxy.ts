// The site proxy (spec "Site proxy", CONTRACT "Variables, proxy hosts, proxy"): a page of a site calls an
// HTTPS API through POST /api/v1/proxy/:slug with `{{NAME}}` placeholders that are filled in here from the
// site's variables, so the secret never ships in the page. Guard rails, in the contract's order: disabled
// -> 403; unknown site -> 404; Origin not one of the site's -> 403; bad request -> 400/413. Then the
// target must be https, its hostname on the site's allowlist and every address it resolves to public
// (core/addresses.ts); the connection goes to the very addresses that were checked (the lookup is pinned,
// so a second DNS answer cannot rebind it). Redirects are returned, not followed. Request body <= 1 MiB,
// response <= 10 MiB, 30 s in all. Hop-by-hop and cookie headers are dropped both ways, and any variable
// value the upstream echoes back is masked.

import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, errors as undiciErrors } from 'undici';
import type { Db } from '../store/db/db.js';
import { isProxyHostAllowed } from '../store/db/tables/proxy-host.js';
import { findLiveSite, type SiteRow } from '../store/db/tables/site.js';
import type { AddressResolver } from '../store/dns/resolve.js';
import type { RateStore } from '../store/rate/types.js';
import { isForbiddenAddress } from './addresses.js';
import { ApiError, invalid, notFound } from './errors.js';
import { type HostConfig, isSiteOrigin, normalizeHostname } from './hosts.js';
import { variableValues } from './variables.js';

export const PROXY_MAX_REQUEST_BODY_BYTES = 1024 * 1024;
export const PROXY_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
export const PROXY_TIMEOUT_MS = 30_000;
export const MAX_PROXY_HEADERS = 50;

export interface ProxyDeps {
  db: Db;
  /** Decides whether a handle's or domain's plan still includes it (its pages are origins of the site). */
  clock: { now(): number };
  config: HostConfig & {
    proxyEnabled: boolean;
    proxyAllowPrivateAddresses: boolean;
    proxyRateLimit: number;
  };
  /** The counters of the proxy's own window (core/proxy-rate.ts). */
  rate: RateStore;
  variablesKey: Buffer;
  /** Resolves a hostname to all its addresses (store/dns/resolve.ts). */
  resolve: AddressResolver;
  /** Extra CA certificates to trust for upstreams (tests); default: Node's store (+ NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer;
}

export interface ProxyResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

const forbidden = (message: string) => new ApiError('FORBIDDEN', message);
const upstreamError = (message: string, status = 502) => new ApiError('UPSTREAM_ERROR', message, { status });

/** Who is calling, as the HTTP layer sees it. */
export interface ProxyCaller {
  origin: string | undefined;
  /**
   * The browser says this request loads a document (a navigation, a form submission, a frame, an object or
   * embed; Fetch Metadata `Sec-Fetch-Mode`/`Sec-Fetch-Dest`). The proxy answers fetch() calls only: what an
   * upstream returns must never become a page of the service's origin.
   */
  navigation: boolean;
  /**
   * A CORS preflight (OPTIONS): answered for the site's origins even when the proxy is disabled, so that
   * the page's actual call reaches the service and reads the 403 that says why.
   */
  preflight?: boolean;
}

export const PROXY_DISABLED_MESSAGE =
  'The site proxy is switched off on this server (PROXY_ENABLED=false); nothing was forwarded. ' +
  "The server's operator must set PROXY_ENABLED=true and restart the service.";

/** Checks that apply before the body is looked at; throws the contract's 403/404; returns the site. */
export async function checkProxyCaller(deps: ProxyDeps, slug: string, caller: ProxyCaller): Promise<SiteRow> {
  if (!deps.config.proxyEnabled && !caller.preflight) throw forbidden(PROXY_DISABLED_MESSAGE);
  if (caller.navigation) {
    throw forbidden(
      'The proxy answers fetch() calls from pages of the site, not navigations or form submissions; nothing was forwarded.',
    );
  }
  const site = await findLiveSite(deps.db.kysely, slug);
  if (!site) throw notFound(`Site "${slug}" not found`);
  const { origin } = caller;
  // An origin of the site: a host serving it by the one host rule (core/hosts.ts), compared whole.
  if (origin === undefined || !(await isSiteOrigin(deps, origin, slug))) {
    throw forbidden(
      origin === undefined
        ? 'The proxy only answers pages of the site: the request has no Origin header.'
        : `The proxy only answers pages of the site; origin ${JSON.stringify(origin.slice(0, 200))} is not one of them.`,
    );
  }
  return site;
}

/**
 * Whether `origin` is an origin of the live site `slug`: the answer to it may carry CORS headers even when
 * it is a refusal (a disabled proxy), so the page can read the reason. Never throws.
 */
export async function isOriginOfLiveSite(deps: ProxyDeps, slug: string, origin: string | undefined) {
  if (origin === undefined) return false;
  try {
    return (
      (await findLiveSite(deps.db.kysely, slug)) !== undefined && (await isSiteOrigin(deps, origin, slug))
    );
  } catch {
    return false;
  }
}

// RFC 9110 §7.6.1 hop-by-hop fields, and fields the proxy sets itself.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const REQUEST_HEADERS_SET_HERE = new Set(['host', 'content-length', 'accept-encoding', 'expect']);
/**
 * Upstream response fields never passed on: the answer comes from the service's own origin, so any field
 * that acts on the origin rather than on this one response would let an upstream (chosen by a site owner)
 * act on the service's pages, cookies and storage. The HTTP layer sets its own CSP, framing, sniffing,
 * resource-policy and disposition fields on every proxy answer.
 */
const RESPONSE_HEADERS_DROPPED = new Set([
  'set-cookie',
  'set-cookie2',
  'content-length',
  'clear-site-data', // would wipe the dashboard's cookies and storage
  'strict-transport-security',
  'alt-svc',
  'public-key-pins',
  'public-key-pins-report-only',
  'expect-ct',
  'content-disposition',
  'x-frame-options',
  'x-content-type-options',
  'x-xss-protection',
  'refresh', // a navigation, were the answer ever shown
  'link', // preload/prefetch/modulepreload on the service's origin
  'service-worker-allowed',
  'origin-agent-cluster',
  'permissions-policy',
  'feature-policy',
  'document-policy',
  'require-document-policy',
  'accept-ch',
  'critical-ch',
  'nel',
  'report-to',
  'reporting-endpoints',
  'origin-trial',
  'set-login',
  'speculation-rules',
  'supports-loading-mode',
  'timing-allow-origin',
  'x-dns-prefetch-control',
  'x-permitted-cross-domain-policies',
]);
/** Whole families of policy fields: CSP (and -report-only), CORS, and the cross-origin isolation policies. */
const RESPONSE_HEADER_PREFIXES_DROPPED = ['content-security-policy', 'access-control-', 'cross-origin-'];

const droppedResponseHeader = (lower: string) =>
  HOP_BY_HOP.has(lower) ||
  RESPONSE_HEADERS_DROPPED.has(lower) ||
  RESPONSE_HEADER_PREFIXES_DROPPED.some((prefix) => lower.startsWith(prefix));
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PLACEHOLDER_RE = /\{\{\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}/g;
/** The methods a proxy call may use (any case). */
export const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const METHODS = new Set<string>(PROXY_METHODS);

interface ProxyCall {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Validates the body's shape (before any variable is read). */
function parseCall(input: unknown): ProxyCall {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid('The body must be a JSON object: {"url", "method", "headers", "body"}.');
  }
  const { url, method = 'GET', headers = {}, body } = input as Record<string, unknown>;
  if (typeof url !== 'string' || url === '') throw invalid('url is required: the full https:// URL to call.');
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw invalid('url is not a valid absolute URL.');
  }
  if (target.protocol !== 'https:') throw invalid('The proxy only calls https:// URLs.');
  if (target.username !== '' || target.password !== '') {
    throw invalid('url must not carry credentials; put them in a header with a {{VARIABLE}} placeholder.');
  }
  if (typeof method !== 'string' || !METHODS.has(method.toUpperCase())) {
    throw invalid(`method must be one of ${[...METHODS].join(', ')}.`);
  }
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw invalid('headers must be an object of header names to string values.');
  }
  const entries = Object.entries(headers as Record<string, unknown>);
  if (entries.length > MAX_PROXY_HEADERS) throw invalid(`At most ${MAX_PROXY_HEADERS} headers.`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN_RE.test(name))
      throw invalid(`Header name ${JSON.stringify(name.slice(0, 100))} is not valid.`);
    if (typeof value !== 'string') throw invalid(`Header ${name} must have a string value.`);
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || REQUEST_HEADERS_SET_HERE.has(lower) || lower === 'cookie') continue;
    out[lower] = value;
  }
  if (body !== undefined && body !== null && typeof body !== 'string') {
    throw invalid('body must be a string (JSON.stringify it first).');
  }
  const upper = method.toUpperCase();
  if (typeof body === 'string' && body !== '' && (upper === 'GET' || upper === 'HEAD')) {
    throw invalid(`A ${upper} request cannot have a body.`);
  }
  if (typeof body === 'string' && Buffer.byteLength(body, 'utf8') > PROXY_MAX_REQUEST_BODY_BYTES) {
    throw invalid(`body is larger than ${PROXY_MAX_REQUEST_BODY_BYTES} bytes.`, { status: 413 });
  }
  return { url: target, method: upper, headers: out, body: typeof body === 'string' ? body : undefined };
}

/** Fills `{{NAME}}` placeholders; an unknown name refuses the call (nothing is forwarded). */
function fill(
  text: string,
  values: Map<string, string>,
  used: Set<string>,
  encode: (value: string) => string = (value) => value,
): string {
  return text.replace(PLACEHOLDER_RE, (_m, name: string) => {
    const value = values.get(name);
    if (value === undefined) {
      throw invalid(`Unknown variable {{${name}}}: store it first with PUT /api/v1/publish/:slug/variables.`);
    }
    used.add(value);
    return encode(value);
  });
}

/** A value put into a path segment: characters outside RFC 3986 `pchar` are percent-encoded. */
const encodePathPart = (value: string) =>
  value.replace(/[^A-Za-z0-9._~:@!$&'()*+,;=-]/g, (c) => encodeURIComponent(c));

/**
 * A value put into the query: every character but the unreserved ones is percent-encoded, so a value
 * holding `&`, `=`, `+` or `#` stays one value (upstreams read `+` as a space and `&` as a new field).
 */
const encodeQueryPart = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Resolves the target and refuses it when any address is not public (unless the escape hatch is on). */
async function resolveTarget(deps: ProxyDeps, hostname: string): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = await deps.resolve(hostname);
  } catch {
    throw upstreamError(`Could not resolve ${hostname}.`);
  }
  if (addresses.length === 0) throw upstreamError(`Could not resolve ${hostname}.`);
  if (!deps.config.proxyAllowPrivateAddresses && addresses.some((a) => isForbiddenAddress(a.address))) {
    throw forbidden(
      `${hostname} resolves to a private, loopback or otherwise internal address; the proxy refuses it.`,
    );
  }
  return addresses;
}

/** A lookup that answers only the addresses already checked: the connection cannot be rebound (also webhooks). */
export function pinnedLookup(addresses: LookupAddress[]) {
  return (
    _hostname: string,
    options: { all?: boolean } | number | undefined,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const all = typeof options === 'object' && options?.all === true;
    const first = addresses[0]!;
    if (all) callback(null, addresses);
    else callback(null, first.address, first.family);
  };
}

/**
 * The forms in which an upstream may echo a variable value: as sent, JSON-escaped, base64 (padded or
 * not), base64url, hex, and percent-encoded (URL and form encoding). Case changes are caught by matching
 * without regard to ASCII case (masking a little too much is the safe side).
 */
function echoForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const base64 = bytes.toString('base64');
  const json = JSON.stringify(value).slice(1, -1);
  const uriComponent = encodeURIComponent(value);
  const forms = new Set([
    value,
    json,
    json.replace(/\//g, '\\/'), // PHP's json_encode escapes `/`
    base64,
    base64.replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    uriComponent,
    uriComponent.replace(/%20/g, '+'), // form encoding
    uriComponent.replace(/%2F/gi, '/'), // Python's quote(), Java's and Go's path escaping
    encodePathPart(value), // as this proxy put it in a path
    encodeQueryPart(value), // as this proxy put it in a query
  ]);
  return [...forms].filter((form) => form.length > 0).map((form) => form.toLowerCase());
}

/** ASCII lower case of a buffer (other bytes unchanged), so offsets match the original. */
function asciiLower(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const c = out[i]!;
    if (c >= 0x41 && c <= 0x5a) out[i] = c | 0x20;
  }
  return out;
}

/** Overwrites every occurrence of a variable value, in any of its echo forms, with asterisks of equal length. */
function echoMasker(values: Iterable<string>): (bytes: Buffer) => Buffer {
  const needles = [...values].flatMap(echoForms).map((form) => Buffer.from(form, 'utf8'));
  return (bytes) => maskNeedles(bytes, needles);
}

function maskNeedles(body: Buffer, needles: Buffer[]): Buffer {
  if (needles.length === 0 || body.length === 0) return body;
  const haystack = asciiLower(body);
  let masked = body;
  for (const needle of needles) {
    for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
      if (masked === body) masked = Buffer.from(body);
      masked.fill(0x2a, at, at + needle.length);
    }
  }
  return masked;
}

/** Forwards one call. `checkProxyCaller` must have passed. */
export async function forwardProxyCall(
  deps: ProxyDeps,
  slug: string,
  input: unknown,
): Promise<ProxyResponse> {
  const call = parseCall(input);
  if (isIP(call.url.hostname.replace(/^\[|\]$/g, '')) !== 0) {
    throw forbidden('The proxy calls allowlisted hostnames only, not IP addresses.');
  }
  // Only the https port: an allowlisted name must not become a port scanner of its host (refused vs open
  // ports are told apart by the answer). The test-only escape hatch lifts it, as a loopback test upstream
  // cannot listen on 443 without root.
  if (call.url.port !== '' && !deps.config.proxyAllowPrivateAddresses) {
    throw forbidden(`The proxy only calls port 443; ${call.url.host} names port ${call.url.port}.`);
  }
  const host = normalizeHostname(call.url.hostname);
  if ('problem' in host || !(await isProxyHostAllowed(deps.db.kysely, slug, host.hostname))) {
    throw forbidden(
      `${call.url.hostname} is not on this site's proxy allowlist; the owner adds it with PUT /api/v1/publish/${slug}/proxy-hosts.`,
    );
  }
  const hostname = host.hostname;

  const values = await variableValues(deps, slug);
  const used = new Set<string>();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.headers)) {
    const filled = fill(value, values, used);
    // RFC 9110 §5.5: no CR, LF or NUL in a field value (a variable must not smuggle a header).
    if (/[\r\n\0]/.test(filled)) throw invalid(`Header ${name} would contain a line break.`);
    headers[name] = filled;
  }
  const body = call.body === undefined ? undefined : fill(call.body, values, used);
  // The URL parser percent-encodes braces: `/bot%7B%7BTOKEN%7D%7D/` is `/bot{{TOKEN}}/` to the caller.
  const braces = (text: string) => text.replace(/%7B%7B/gi, '{{').replace(/%7D%7D/gi, '}}');
  const path =
    fill(braces(call.url.pathname), values, used, encodePathPart) +
    fill(braces(call.url.search), values, used, encodeQueryPart);
  // Ask for identity so an echoed secret can be found and masked in the bytes we return.
  headers['accept-encoding'] = 'identity';

  const addresses = await resolveTarget(deps, hostname);
  const agent = new Agent({
    connect: { lookup: pinnedLookup(addresses), ...(deps.ca ? { ca: deps.ca } : {}) } as never,
    headersTimeout: PROXY_TIMEOUT_MS,
    bodyTimeout: PROXY_TIMEOUT_MS,
    pipelining: 0,
  });
  const signal = AbortSignal.timeout(PROXY_TIMEOUT_MS);
  try {
    const res = await request(`https://${hostname}${call.url.port ? `:${call.url.port}` : ''}${path}`, {
      method: call.method as 'GET',
      headers,
      body,
      dispatcher: agent,
      signal,
      maxRedirections: 0,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > PROXY_MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw upstreamError(`The upstream response is larger than ${PROXY_MAX_RESPONSE_BYTES} bytes.`);
      }
      chunks.push(chunk as Buffer);
    }
    const mask = echoMasker(values.values());
    const maskText = (text: string) => mask(Buffer.from(text)).toString();
    const out: Record<string, string | string[]> = {};
    const connectionListed = new Set(
      String(res.headers.connection ?? '')
        .split(',')
        .map((t) => t.trim().toLowerCase()),
    );
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      const lower = name.toLowerCase();
      if (droppedResponseHeader(lower) || connectionListed.has(lower)) continue;
      // A field name cannot be masked in place (asterisks are not a token): one that carries a value goes.
      if (maskText(lower) !== lower) continue;
      out[lower] = Array.isArray(value) ? value.map(maskText) : maskText(value);
    }
    return { status: res.statusCode, headers: out, body: mask(Buffer.concat(chunks)) };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The upstream's own error text may quote the URL (and so a filled-in secret): report a code only.
    if (
      signal.aborted ||
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError
    ) {
      throw upstreamError(`${hostname} did not answer within ${PROXY_TIMEOUT_MS / 1000} s.`, 504);
    }
    const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
    throw upstreamError(`Could not reach ${hostname}${code ? ` (${code})` : ''}.`);
  } finally {
    void agent.close().catch(() => {});
  }
}
