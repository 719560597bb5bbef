// A typed client of Slipway's public HTTP API (spec, CONTRACT). The CLI and the MCP server are thin
// shells over it (DESIGN 18); it imports nothing from the service (core, http, serve, store), so it can
// ship as its own package. Its request and answer types are the API's own (src/api/), imported as types
// only: they vanish at build, so the client carries no service code.

import { open } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { Account } from '../api/account.js';
import type { AliasDeleted, AliasList, AliasSet } from '../api/aliases.js';
import type { AnalyticsReport } from '../api/analytics.js';
import type { RequestCodeReply, VerifyCodeReply } from '../api/auth.js';
import type { Checkout, Portal } from '../api/billing.js';
import type { DomainAdded, DomainDeleted, DomainList, DomainVerification } from '../api/domains.js';
import type { HandleInfo, HandleReleased, HandleSet } from '../api/handle.js';
import type { Link, LinkBody, LinkDeleted, LinkList } from '../api/links.js';
import type { ProxyHostList } from '../api/proxy-hosts.js';
import type {
  Claimed,
  Deleted,
  Duplicated,
  FinalizeReply,
  ManifestEntry,
  MetadataBody,
  PublishReply,
  Restored,
  SiteDetails,
  SiteList,
  UploadEntry,
  Version,
  Viewer,
} from '../api/sites.js';
import type {
  CreatedDeployToken,
  CreateTokenBody,
  DeployTokenList,
  RevokedDeployToken,
} from '../api/tokens.js';
import type { UploadResult } from '../api/uploads.js';
import type { Removed, Stored, VariableList, VariablesBody } from '../api/variables.js';
import type {
  WebhookBody,
  WebhookCreated,
  WebhookDeleted,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookList,
} from '../api/webhooks.js';

/** An upload body that is a file on disk: sent with one reused buffer, so memory does not grow with size. */
export interface FileBody {
  file: string;
}

/**
 * Parallel uploads of a publish unless the caller says otherwise: the service takes 16 at once from one
 * client (UPLOADS_PER_CLIENT), and 1000 files / 50 MB went faster at 16 than at 8 (docs/decisions.md, issue 23).
 */
export const DEFAULT_UPLOAD_CONCURRENCY = 16;

/** Bytes read and sent at a time from a FileBody. */
const FILE_CHUNK_BYTES = 256 * 1024;

export interface ClientOptions {
  /** The service's base URL (`--server`, SLIPWAY_URL; default http://localhost:8080). */
  server: string;
  /** `svc_live_...` (an API key) or `svc_site_...` (a deploy token of one site); without it calls are anonymous. */
  apiKey?: string;
  /** Per-request timeout for JSON calls (uploads have none: they stream). */
  timeoutMs?: number;
}

/** The server answered with the spec's error body `{error, code, status}` (plus `hint`, extra fields). */
export class ApiClientError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  /** The whole error body (e.g. `detectedSecrets` and `remediation` of SECRET_DETECTED). */
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>) {
    super(typeof body.error === 'string' ? body.error : `HTTP ${status}`);
    this.name = 'ApiClientError';
    this.status = status;
    this.code = typeof body.code === 'string' ? body.code : `HTTP_${status}`;
    this.hint = typeof body.hint === 'string' ? body.hint : undefined;
    this.body = body;
  }
}

/** The server could not be reached (or answered something that is not the API). */
export class NetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

type Json = Record<string, unknown>;

const DEFAULT_TIMEOUT_MS = 30_000;

export class ApiClient {
  readonly server: string;
  readonly apiKey: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** A client for the same server with another key. */
  withKey(apiKey: string | undefined): ApiClient {
    return new ApiClient({ server: this.server, apiKey, timeoutMs: this.timeoutMs });
  }

  /**
   * One JSON call; throws ApiClientError on an error body, NetworkError when the server is not there.
   * Through node:http(s), not fetch: fetch's first use loads undici, ~20 ms of every command's start.
   */
  async call<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    let answer: Answer;
    try {
      answer = await sendJson(`${this.server}${path}`, method, headers, payload, this.timeoutMs);
    } catch (err) {
      const timedOut = (err as { cause?: Error }).cause?.name === 'TimeoutError';
      throw new NetworkError(
        timedOut
          ? `${this.server} did not answer within ${this.timeoutMs / 1000} s`
          : `cannot reach ${this.server} (${describeCause(err)})`,
        { cause: err },
      );
    }
    return parseAnswer<T>(answer, this.server);
  }

  /**
   * PUT one file's bytes to its upload address (token-gated: no API key is sent). `body` is sent as is,
   * streamed when it is a stream, with `size` as Content-Length. A failure names the address's server,
   * which is the service's BASE_URL and may differ from `server`.
   */
  async upload(
    entry: UploadEntry,
    body: Buffer | NodeJS.ReadableStream | FileBody,
    size: number,
  ): Promise<UploadResult> {
    const target = originOf(entry.url);
    const headers = { 'content-type': entry.headers['Content-Type'], 'content-length': String(size) };
    if (isFileBody(body)) {
      let answer: Answer;
      try {
        answer = await putFile(entry.url, headers, body.file, size);
      } catch (err) {
        throw new NetworkError(`upload of ${entry.path} to ${target} failed (${describeCause(err)})`, {
          cause: err,
        });
      }
      return parseAnswer<UploadResult>(answer, target);
    }
    let res: Response;
    try {
      res = await fetch(entry.url, {
        method: 'PUT',
        headers,
        // A Node stream is an async iterable of bytes, which fetch streams (`duplex: 'half'`).
        body: body as unknown as RequestInit['body'],
        duplex: 'half',
      } as RequestInit);
    } catch (err) {
      if (!Buffer.isBuffer(body)) (body as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      throw new NetworkError(`upload of ${entry.path} to ${target} failed (${describeCause(err)})`, {
        cause: err,
      });
    }
    return parseAnswer<UploadResult>({ status: res.status, text: await res.text() }, target);
  }

  // ---- sign-in and account ------------------------------------------------------------------
  requestCode(email: string) {
    return this.call<RequestCodeReply>('POST', '/api/auth/agent/request-code', { email });
  }
  verifyCode(email: string, code: string) {
    return this.call<VerifyCodeReply>('POST', '/api/auth/agent/verify-code', { email, code });
  }
  account() {
    return this.call<Account>('GET', '/api/v1/account');
  }

  // ---- sites -------------------------------------------------------------------------------
  createSite(files: ManifestEntry[], viewer?: Viewer) {
    return this.call<PublishReply>('POST', '/api/v1/publish', { files, ...(viewer ? { viewer } : {}) });
  }
  updateSite(
    slug: string,
    files: ManifestEntry[],
    options: { baseVersionId?: string | null; viewer?: Viewer } = {},
  ) {
    return this.call<PublishReply>('PUT', `/api/v1/publish/${enc(slug)}`, { files, ...options });
  }
  /** `live: false` finalizes a preview (the live version stays); `alias` points an alias at the version. */
  finalize(slug: string, versionId: string, options: { live?: boolean; alias?: string } = {}) {
    return this.call<FinalizeReply>('POST', `/api/v1/publish/${enc(slug)}/finalize`, {
      versionId,
      ...options,
    });
  }
  getSite(slug: string) {
    return this.call<SiteDetails>('GET', `/api/v1/publish/${enc(slug)}`);
  }
  listSites(options: { limit?: number; cursor?: string } = {}) {
    const q = new URLSearchParams();
    if (options.limit !== undefined) q.set('limit', String(options.limit));
    if (options.cursor !== undefined) q.set('cursor', options.cursor);
    return this.call<SiteList>('GET', `/api/v1/publishes${q.size > 0 ? `?${q}` : ''}`);
  }
  deleteSite(slug: string) {
    return this.call<Deleted>('DELETE', `/api/v1/publish/${enc(slug)}`);
  }
  duplicateSite(slug: string) {
    return this.call<Duplicated>('POST', `/api/v1/publish/${enc(slug)}/duplicate`);
  }
  claimSite(slug: string, claimToken: string) {
    return this.call<Claimed>('POST', `/api/v1/publish/${enc(slug)}/claim`, { claimToken });
  }
  setMetadata(slug: string, patch: MetadataBody) {
    return this.call<{ slug: string; updated: true }>(
      'PATCH',
      `/api/v1/publish/${enc(slug)}/metadata`,
      patch,
    );
  }
  versions(slug: string) {
    return this.call<{ versions: Version[] }>('GET', `/api/v1/publish/${enc(slug)}/versions`);
  }
  restoreVersion(slug: string, versionId: string) {
    return this.call<Restored>('POST', `/api/v1/publish/${enc(slug)}/versions/${enc(versionId)}/restore`);
  }
  listAliases(slug: string) {
    return this.call<AliasList>('GET', `/api/v1/publish/${enc(slug)}/aliases`);
  }
  setAlias(slug: string, name: string, versionId: string) {
    return this.call<AliasSet>('PUT', `/api/v1/publish/${enc(slug)}/aliases/${enc(name)}`, { versionId });
  }
  deleteAlias(slug: string, name: string) {
    return this.call<AliasDeleted>('DELETE', `/api/v1/publish/${enc(slug)}/aliases/${enc(name)}`);
  }

  // ---- variables, proxy hosts --------------------------------------------------------------
  listVariables(slug: string) {
    return this.call<VariableList>('GET', `/api/v1/publish/${enc(slug)}/variables`);
  }
  setVariables(slug: string, values: VariablesBody) {
    return this.call<Stored>('PUT', `/api/v1/publish/${enc(slug)}/variables`, values);
  }
  deleteVariable(slug: string, name: string) {
    return this.call<Removed>('DELETE', `/api/v1/publish/${enc(slug)}/variables/${enc(name)}`);
  }
  listProxyHosts(slug: string) {
    return this.call<ProxyHostList>('GET', `/api/v1/publish/${enc(slug)}/proxy-hosts`);
  }
  setProxyHosts(slug: string, hosts: string[]) {
    return this.call<Stored>('PUT', `/api/v1/publish/${enc(slug)}/proxy-hosts`, { hosts });
  }
  deleteProxyHost(slug: string, hostname: string) {
    return this.call<Removed>('DELETE', `/api/v1/publish/${enc(slug)}/proxy-hosts/${enc(hostname)}`);
  }

  // ---- analytics -----------------------------------------------------------------------------
  getAnalytics(slug: string, query: { from?: string; to?: string; granularity?: 'hour' | 'day' } = {}) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
    const qs = q.size === 0 ? '' : `?${q}`;
    return this.call<AnalyticsReport>('GET', `/api/v1/publish/${enc(slug)}/analytics${qs}`);
  }

  // ---- deploy tokens -------------------------------------------------------------------------
  createToken(slug: string, body: CreateTokenBody) {
    return this.call<CreatedDeployToken>('POST', `/api/v1/publish/${enc(slug)}/tokens`, body);
  }
  listTokens(slug: string) {
    return this.call<DeployTokenList>('GET', `/api/v1/publish/${enc(slug)}/tokens`);
  }
  revokeToken(slug: string, id: string) {
    return this.call<RevokedDeployToken>('DELETE', `/api/v1/publish/${enc(slug)}/tokens/${enc(id)}`);
  }

  // ---- handle, domains, links --------------------------------------------------------------
  getHandle() {
    return this.call<HandleInfo>('GET', '/api/v1/handle');
  }
  setHandle(handle: string) {
    return this.call<HandleSet>('PUT', '/api/v1/handle', { handle });
  }
  deleteHandle() {
    return this.call<HandleReleased>('DELETE', '/api/v1/handle');
  }
  addDomain(domain: string) {
    return this.call<DomainAdded>('POST', '/api/v1/domains', { domain });
  }
  verifyDomain(domain: string) {
    return this.call<DomainVerification>('POST', `/api/v1/domains/${enc(domain)}/verify`);
  }
  listDomains() {
    return this.call<DomainList>('GET', '/api/v1/domains');
  }
  deleteDomain(domain: string) {
    return this.call<DomainDeleted>('DELETE', `/api/v1/domains/${enc(domain)}`);
  }
  listLinks() {
    return this.call<LinkList>('GET', '/api/v1/links');
  }
  createLink(link: LinkBody) {
    return this.call<Link>('POST', '/api/v1/links', link);
  }
  deleteLink(id: string) {
    return this.call<LinkDeleted>('DELETE', `/api/v1/links/${enc(id)}`);
  }

  // ---- webhooks ----------------------------------------------------------------------------
  createWebhook(body: WebhookBody) {
    return this.call<WebhookCreated>('POST', '/api/v1/webhooks', body);
  }
  listWebhooks() {
    return this.call<WebhookList>('GET', '/api/v1/webhooks');
  }
  deleteWebhook(id: string) {
    return this.call<WebhookDeleted>('DELETE', `/api/v1/webhooks/${enc(id)}`);
  }
  listWebhookDeliveries(id: string) {
    return this.call<WebhookDeliveryList>('GET', `/api/v1/webhooks/${enc(id)}/deliveries`);
  }
  redeliverWebhook(id: string, deliveryId: string) {
    return this.call<WebhookDelivery>(
      'POST',
      `/api/v1/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/redeliver`,
    );
  }

  // ---- billing -----------------------------------------------------------------------------
  checkout() {
    return this.call<Checkout>('POST', '/api/billing/checkout');
  }
  portal() {
    return this.call<Portal>('POST', '/api/billing/portal');
  }
}

const enc = encodeURIComponent;

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function isFileBody(body: Buffer | NodeJS.ReadableStream | FileBody): body is FileBody {
  return !Buffer.isBuffer(body) && typeof (body as FileBody).file === 'string';
}

/**
 * PUTs `size` bytes of `file` to `url` through node:http(s), reading into one buffer that is reused
 * once the socket has taken the previous chunk: the memory of an upload does not grow with the file
 * (fetch with a stream body let a 190 MB file take 300 MB). Resolves with the answer, whatever its status.
 */
async function putFile(
  url: string,
  headers: Record<string, string>,
  file: string,
  size: number,
): Promise<Answer> {
  const target = new URL(url);
  const handle = await open(file, 'r');
  try {
    return await new Promise((resolve, reject) => {
      const req = request(target, { method: 'PUT', headers });
      let answered = false;
      req.once('error', (err) => {
        if (!answered) reject(err);
      });
      req.once('response', (res) => {
        readAnswer(res).then((answer) => {
          answered = true;
          resolve(answer);
          // An early answer (a refusal mid-body) ends the upload: nothing more is sent.
          if (!req.writableFinished) req.destroy();
        }, reject);
      });
      const send = async () => {
        const buffer = Buffer.allocUnsafe(Math.min(FILE_CHUNK_BYTES, Math.max(size, 1)));
        for (let sent = 0; sent < size; ) {
          const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - sent), sent);
          if (bytesRead === 0) throw new Error(`${file} became shorter than when it was hashed`);
          if (answered || req.destroyed) return;
          await new Promise<void>((done, failed) => {
            req.write(buffer.subarray(0, bytesRead), (err) => (err ? failed(err) : done()));
          });
          sent += bytesRead;
        }
        req.end();
      };
      send().catch((err: Error) => {
        if (!answered) req.destroy(err);
      });
    });
  } finally {
    await handle.close();
  }
}

let https: typeof import('node:https') | undefined;

/**
 * A request to `target` through node:http or node:https. node:https is loaded on the first https
 * address: it loads node:tls, ~10 ms of every command's start against an http:// service.
 */
export function request(target: URL, options: http.RequestOptions): http.ClientRequest {
  if (target.protocol !== 'https:') return http.request(target, options);
  https ??= createRequire(import.meta.url)('node:https') as typeof import('node:https');
  return https.request(target, options);
}

/** An HTTP answer: its status and body text. */
interface Answer {
  status: number;
  text: string;
}

/** One request with a whole (or no) body; the answer whatever its status. Aborted after `timeoutMs`. */
function sendJson(
  url: string,
  method: string,
  headers: Record<string, string>,
  payload: string | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(target, {
      method,
      headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.once('error', reject);
    req.once('response', (res) => readAnswer(res).then(resolve, reject));
    req.end(payload);
  });
}

function readAnswer(res: http.IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.once('error', reject);
    res.once('end', () =>
      resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** The JSON of an answer, or the error it stands for. */
export function parseAnswer<T>(answer: Answer, server: string): T {
  const { status, text } = answer;
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new NetworkError(`${server} answered HTTP ${status} with something that is not the Slipway API`);
  }
  if (status < 200 || status > 299) {
    const body = json !== null && typeof json === 'object' ? (json as Json) : {};
    throw new ApiClientError(status, body);
  }
  return json as T;
}
