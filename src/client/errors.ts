/**
 * Errors of the HTTP client: one class per server error code (`{code, message}` bodies, statuses
 * from src/errors.ts), all subclasses of WardenApiError carrying `code`, `status` and the server's
 * message. A 429 is a RateLimitedError with the server's Retry-After in seconds.
 */

/** Any error answer of `warden serve`. `code` is the server's stable code (e.g. "NOT_FOUND"). */
export class WardenApiError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400 INVALID_ARGUMENT / POLICY_INVALID: the message names the field. */
export class InvalidArgumentError extends WardenApiError {}
/** 401 UNAUTHORIZED: missing or unknown bearer key. */
export class UnauthorizedError extends WardenApiError {}
/** 403 PATH_OUTSIDE_WORKSPACE. */
export class PathOutsideWorkspaceError extends WardenApiError {}
/** 403 PERMISSION_DENIED: the sandbox refused the path to its user (unreadable file, read-only directory). */
export class PermissionDeniedError extends WardenApiError {}
/** 404 NOT_FOUND: unknown id, or another tenant's. */
export class NotFoundError extends WardenApiError {}
/** 409 CONFLICT / SANDBOX_NOT_RUNNING. */
export class ConflictError extends WardenApiError {}
/** 413 PAYLOAD_TOO_LARGE: a body over the server's limit. */
export class PayloadTooLargeError extends WardenApiError {}
/** 5xx: the server or its engine failed (ENGINE_UNREACHABLE, SANDBOX_ERROR, INTERNAL…). */
export class ServerError extends WardenApiError {}

/** 429 RATE_LIMITED: over a quota; `retryAfterSeconds` is the server's Retry-After. */
export class RateLimitedError extends WardenApiError {
  constructor(
    code: string,
    status: number,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(code, status, message);
  }
}

const BY_CODE: Record<string, typeof WardenApiError> = {
  INVALID_ARGUMENT: InvalidArgumentError,
  POLICY_INVALID: InvalidArgumentError,
  UNAUTHORIZED: UnauthorizedError,
  PATH_OUTSIDE_WORKSPACE: PathOutsideWorkspaceError,
  PERMISSION_DENIED: PermissionDeniedError,
  NOT_FOUND: NotFoundError,
  CONFLICT: ConflictError,
  SANDBOX_NOT_RUNNING: ConflictError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
};

/**
 * Seconds to wait from a Retry-After header (delta-seconds or an HTTP date, RFC 9110 §10.2.3);
 * `fallback` when absent or unreadable.
 */
export function retryAfterSeconds(header: string | null, fallback = 1, nowMs = Date.now()): number {
  if (header === null) return fallback;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? fallback : Math.max(0, (date - nowMs) / 1000);
}

/** The error for a non-2xx response; reads its `{code, message}` body (text bodies are kept as the message). */
export async function errorFromResponse(response: Response): Promise<WardenApiError> {
  const text = await response.text().catch(() => "");
  let code = `HTTP_${response.status}`;
  let message = text || response.statusText;
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.code === "string") code = body.code;
    if (typeof body.message === "string") message = body.message;
  } catch {
    // not JSON: keep the text
  }
  if (response.status === 429) {
    return new RateLimitedError(code, 429, message, retryAfterSeconds(response.headers.get("retry-after")));
  }
  const Class = BY_CODE[code] ?? (response.status >= 500 ? ServerError : WardenApiError);
  return new Class(code, response.status, message);
}
