// A typed client of Slipway's public HTTP API (spec, CONTRACT). The CLI and the MCP server are thin
// shells over it (DESIGN 18); it imports nothing from the service (core, http, serve, store), so it can
// ship as its own package.

export interface ClientOptions {
  /** The service's base URL (`--server`, SLIPWAY_URL; default http://localhost:8080). */
  server: string;
  /** `svc_live_...`; without it calls are anonymous. */
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

export interface ManifestFile {
  path: string;
  size: number;
  contentType: string;
  hash?: string;
}

export interface UploadEntry {
  path: string;
  method: 'PUT';
  url: string;
  headers: { 'Content-Type': string };
}

export interface PublishResponse {
  slug: string;
  siteUrl: string;
  upload: {
    versionId: string;
    uploads: UploadEntry[];
    skipped: Array<{ path: string; reason: string }>;
    finalizeUrl: string;
    expiresInSeconds: number;
  };
  claimToken?: string;
  claimUrl?: string;
  expiresAt?: string;
  anonymous?: boolean;
  warning?: string;
}

/** The answer of an upload address (CONTRACT "Uploads"): `stored` false when the bytes were already there. */
export interface UploadResult {
  path: string;
  size: number;
  hash: string;
  stored: boolean;
}

export interface FinalizeResponse {
  slug: string;
  siteUrl: string;
  versionId: string;
  status: 'active';
  warnings?: string[];
}

type Json = Record<string, unknown>;

// Answers of the calls below, as the spec gives them. Each keeps an index signature: the service may add
// fields, and a caller that reads one the type does not name still compiles.

/** GET /api/v1/account. */
export type Account = {
  email: string;
  plan: string;
  handle: string | null;
  usage: {
    sites: { used: number; limit: number | string };
    storage: { used: string; usedBytes: number; limit: string; limitBytes: number };
  };
  limits: { maxFileSize: string; maxFileSizeBytes: number; maxSites: number | string; maxStorage: string };
  createdAt: string;
  [field: string]: unknown;
};

/** GET /api/v1/publish/:slug. */
export type SiteDetails = {
  slug: string;
  siteUrl: string;
  status: string;
  versionId: string | null;
  title: string | null;
  description: string | null;
  ogImagePath: string | null;
  hasPassword: boolean;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  files: Array<{ path: string; size: number; contentType: string; hash: string }>;
  [field: string]: unknown;
};

/** An entry of GET /api/v1/publishes. */
export type SiteSummary = {
  slug: string;
  siteUrl: string;
  status: string;
  title: string | null;
  fileCount: number;
  totalSize: number;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  [field: string]: unknown;
};

export type SiteList = {
  sites: SiteSummary[];
  total: number;
  nextCursor?: string | null;
  [field: string]: unknown;
};

/** An entry of GET /api/v1/publish/:slug/versions (finalized versions, newest first). */
export type VersionSummary = {
  versionId: string;
  createdAt: string;
  finalizedAt: string | null;
  fileCount: number;
  totalSize: number;
  current: boolean;
  [field: string]: unknown;
};

export type DnsRecord = { type: string; name: string; value: string; note?: string };

/** An entry of GET /api/v1/domains. */
export type DomainSummary = {
  domain: string;
  status: string;
  sslStatus: string;
  isApex: boolean;
  verificationTxtName: string;
  verificationTxtValue: string;
  createdAt: string;
  verifiedAt: string | null;
  [field: string]: unknown;
};

/** An entry of GET /api/v1/links (CONTRACT "Links"). */
export type Link = {
  id: string;
  slug: string;
  handle?: string;
  domain?: string;
  location: string;
  url: string;
  createdAt: string;
  [field: string]: unknown;
};

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

  /** One JSON call; throws ApiClientError on an error body, NetworkError when the server is not there. */
  async call<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.server}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError';
      throw new NetworkError(
        timedOut
          ? `${this.server} did not answer within ${this.timeoutMs / 1000} s`
          : `cannot reach ${this.server} (${describeCause(err)})`,
        { cause: err },
      );
    }
    return parseAnswer<T>(res, this.server);
  }

  /**
   * PUT one file's bytes to its upload address (token-gated: no API key is sent). `body` is sent as is,
   * streamed when it is a stream, with `size` as Content-Length. A failure names the address's server,
   * which is the service's BASE_URL and may differ from `server`.
   */
  async upload(
    entry: UploadEntry,
    body: Buffer | NodeJS.ReadableStream,
    size: number,
  ): Promise<UploadResult> {
    const target = originOf(entry.url);
    let res: Response;
    try {
      res = await fetch(entry.url, {
        method: 'PUT',
        headers: { 'content-type': entry.headers['Content-Type'], 'content-length': String(size) },
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
    return parseAnswer<UploadResult>(res, target);
  }

  // ---- sign-in and account ------------------------------------------------------------------
  requestCode(email: string) {
    return this.call('POST', '/api/auth/agent/request-code', { email });
  }
  verifyCode(email: string, code: string) {
    return this.call<{ apiKey: string; email: string; plan: string; isNewUser: boolean }>(
      'POST',
      '/api/auth/agent/verify-code',
      { email, code },
    );
  }
  account() {
    return this.call<Account>('GET', '/api/v1/account');
  }

  // ---- sites -------------------------------------------------------------------------------
  createSite(files: ManifestFile[], viewer?: Json) {
    return this.call<PublishResponse>('POST', '/api/v1/publish', { files, ...(viewer ? { viewer } : {}) });
  }
  updateSite(
    slug: string,
    files: ManifestFile[],
    options: { baseVersionId?: string | null; viewer?: Json } = {},
  ) {
    return this.call<PublishResponse>('PUT', `/api/v1/publish/${enc(slug)}`, { files, ...options });
  }
  finalize(slug: string, versionId: string) {
    return this.call<FinalizeResponse>('POST', `/api/v1/publish/${enc(slug)}/finalize`, { versionId });
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
    return this.call('DELETE', `/api/v1/publish/${enc(slug)}`);
  }
  duplicateSite(slug: string) {
    return this.call('POST', `/api/v1/publish/${enc(slug)}/duplicate`);
  }
  claimSite(slug: string, claimToken: string) {
    return this.call('POST', `/api/v1/publish/${enc(slug)}/claim`, { claimToken });
  }
  setMetadata(slug: string, patch: Json) {
    return this.call('PATCH', `/api/v1/publish/${enc(slug)}/metadata`, patch);
  }
  versions(slug: string) {
    return this.call<{ versions: VersionSummary[] }>('GET', `/api/v1/publish/${enc(slug)}/versions`);
  }
  restoreVersion(slug: string, versionId: string) {
    return this.call<{ slug: string; siteUrl: string; versionId: string; status: string }>(
      'POST',
      `/api/v1/publish/${enc(slug)}/versions/${enc(versionId)}/restore`,
    );
  }

  // ---- variables, proxy hosts --------------------------------------------------------------
  listVariables(slug: string) {
    return this.call<{ variables: Array<{ name: string; createdAt: string; updatedAt: string }> }>(
      'GET',
      `/api/v1/publish/${enc(slug)}/variables`,
    );
  }
  setVariables(slug: string, values: Record<string, string>) {
    return this.call('PUT', `/api/v1/publish/${enc(slug)}/variables`, values);
  }
  deleteVariable(slug: string, name: string) {
    return this.call('DELETE', `/api/v1/publish/${enc(slug)}/variables/${enc(name)}`);
  }
  listProxyHosts(slug: string) {
    return this.call<{ hosts: Array<{ hostname: string; createdAt: string; updatedAt: string }> }>(
      'GET',
      `/api/v1/publish/${enc(slug)}/proxy-hosts`,
    );
  }
  setProxyHosts(slug: string, hosts: string[]) {
    return this.call('PUT', `/api/v1/publish/${enc(slug)}/proxy-hosts`, { hosts });
  }
  deleteProxyHost(slug: string, hostname: string) {
    return this.call('DELETE', `/api/v1/publish/${enc(slug)}/proxy-hosts/${enc(hostname)}`);
  }

  // ---- handle, domains, links --------------------------------------------------------------
  getHandle() {
    return this.call<{ handle: string | null; url: string | null }>('GET', '/api/v1/handle');
  }
  setHandle(handle: string) {
    return this.call('PUT', '/api/v1/handle', { handle });
  }
  deleteHandle() {
    return this.call('DELETE', '/api/v1/handle');
  }
  addDomain(domain: string) {
    return this.call<{
      domain: string;
      status: string;
      dns: { instructions: string; records: DnsRecord[] };
      message: string;
    }>('POST', '/api/v1/domains', { domain });
  }
  verifyDomain(domain: string) {
    return this.call<{ domain: string; status: string; verified: boolean; message: string }>(
      'POST',
      `/api/v1/domains/${enc(domain)}/verify`,
    );
  }
  listDomains() {
    return this.call<{ domains: DomainSummary[]; total: number }>('GET', '/api/v1/domains');
  }
  deleteDomain(domain: string) {
    return this.call('DELETE', `/api/v1/domains/${enc(domain)}`);
  }
  listLinks() {
    return this.call<{ links: Link[] }>('GET', '/api/v1/links');
  }
  createLink(link: { slug: string; domain?: string; location?: string }) {
    return this.call<Link>('POST', '/api/v1/links', link);
  }
  deleteLink(id: string) {
    return this.call('DELETE', `/api/v1/links/${enc(id)}`);
  }

  // ---- billing -----------------------------------------------------------------------------
  checkout() {
    return this.call<{ subscriptionId: string; paymentKeyId: string; shortUrl: string; checkoutUrl: string }>(
      'POST',
      '/api/billing/checkout',
    );
  }
  portal() {
    return this.call<{ portalUrl: string; status: string; currentEnd: string | null }>(
      'POST',
      '/api/billing/portal',
    );
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

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** The JSON of a response, or the error it stands for. */
export async function parseAnswer<T>(res: Response, server: string): Promise<T> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new NetworkError(
      `${server} answered HTTP ${res.status} with something that is not the Slipway API`,
    );
  }
  if (!res.ok) {
    const body = json !== null && typeof json === 'object' ? (json as Json) : {};
    throw new ApiClientError(res.status, body);
  }
  return json as T;
}
