/**
 * The one mapping of `warden serve` from any thrown value to the JSON error
 * body `{code, message}` with the status from HTTP_STATUS (src/errors.ts). Fastify's own errors
 * (body too large, bad JSON, schema validation) map to the closest warden code.
 */
import {
  HTTP_STATUS,
  NO_ROOM_RETRY_AFTER_SECONDS,
  NoRoomError,
  WardenError,
  type WardenErrorCode,
} from "../../errors.js";
import { QuotaExceededError } from "../tenancy/index.js";

/** The JSON body of every error response. */
interface ErrorBody {
  code: WardenErrorCode | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "INTERNAL";
  message: string;
}

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
  validation?: unknown[];
  validationContext?: string;
}

/** An error response: status, JSON body, and Retry-After in seconds when the client should retry. */
export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  retryAfterSeconds?: number;
}

/**
 * Status and body for a thrown value. A tenant quota (QuotaExceededError) is 429 and no room in the
 * backend (NoRoomError: no node takes the Pod, a used-up ResourceQuota) 503 NO_ROOM, both with
 * retryAfterSeconds (a NoRoomError's own, else NO_ROOM_RETRY_AFTER_SECONDS), which the message
 * repeats for no room. Unknown errors become 500 INTERNAL without internals.
 */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof QuotaExceededError) {
    const { retryAfterSeconds } = err;
    return { status: 429, body: { code: err.code, message: err.message }, retryAfterSeconds };
  }
  if (err instanceof NoRoomError) {
    const retryAfterSeconds = err.retryAfterSeconds ?? NO_ROOM_RETRY_AFTER_SECONDS;
    const message = `${err.message} Retry in ${retryAfterSeconds} s (Retry-After).`;
    return { status: 503, body: { code: err.code, message }, retryAfterSeconds };
  }
  if (err instanceof WardenError) {
    return { status: HTTP_STATUS[err.code] ?? 500, body: { code: err.code, message: err.message } };
  }
  const e = (err ?? {}) as FastifyLikeError;
  if (e.validation) {
    return { status: 400, body: { code: "INVALID_ARGUMENT", message: e.message ?? "Invalid request." } };
  }
  if (e.statusCode === 413) {
    return { status: 413, body: { code: "PAYLOAD_TOO_LARGE", message: `${e.message ?? "Body too large"}.` } };
  }
  if (e.statusCode === 415) {
    return {
      status: 415,
      body: { code: "UNSUPPORTED_MEDIA_TYPE", message: e.message ?? "Unsupported type." },
    };
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    const code: WardenErrorCode = e.statusCode === 404 ? "NOT_FOUND" : "INVALID_ARGUMENT";
    return { status: e.statusCode, body: { code, message: e.message ?? "Bad request." } };
  }
  return { status: 500, body: { code: "INTERNAL", message: "Internal server error; see the server log." } };
}
