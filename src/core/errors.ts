// The one error catalogue: every failure the API reports is an ApiError with a spec code and status.
// The HTTP layer turns it into the spec's body `{ error, code, status }` (+ `hint` and extra fields).

/**
 * Error codes with their HTTP status. The first block is the spec's table; the rest fill gaps it leaves.
 * Only codes some module raises (test/core/errors.test.ts); a refinement a client acts on is a field of
 * the body (e.g. `reason: "expired"` of an upload address), not another code.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  PLAN_LIMIT: 403,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  SECRET_DETECTED: 400,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  // Beyond the spec's table (named by the issues and CONTRACT.md).
  INVALID_PATH: 400,
  INVALID_HASH: 400,
  FILE_TOO_LARGE: 413,
  STORAGE_EXCEEDED: 413,
  SITE_LIMIT_EXCEEDED: 403,
  VERSION_CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  // Operators (issue 26, docs/admin.md): what a block or a suspension refuses, by name.
  SIGNIN_BLOCKED: 403,
  PUBLISH_BLOCKED: 403,
  CONTENT_BLOCKED: 403,
  ACCOUNT_SUSPENDED: 403,
  SITE_TAKEN_DOWN: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ApiErrorOptions {
  /** Overrides the catalogue status (e.g. 409/413 INVALID_REQUEST as CONTRACT.md prescribes). */
  status?: number;
  /** A short suggestion for the caller, sent as `hint`. */
  hint?: string;
  /** Extra top-level body fields (e.g. `detectedSecrets` of SECRET_DETECTED, `missing` paths). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. `Retry-After`, `Allow`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.hint = options.hint;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  /** The spec's error body. */
  toBody(): Record<string, unknown> {
    return {
      error: this.message,
      code: this.code,
      status: this.status,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      ...this.extra,
    };
  }
}

/** Shorthands for the errors raised most often. */
export const invalid = (message: string, options?: ApiErrorOptions) =>
  new ApiError('INVALID_REQUEST', message, options);
export const notFound = (message = 'Not found') => new ApiError('NOT_FOUND', message);
export const unauthorized = (message = 'Missing or invalid API key') =>
  new ApiError('UNAUTHORIZED', message, {
    hint: 'Send Authorization: Bearer <API key>; sign in with /api/auth/agent/request-code to get one.',
  });
