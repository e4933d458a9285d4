/**
 * `warden/client`: a typed HTTP client of `warden serve`. Loads nothing of the server at run time
 * (its types come from the route schemas through type-only imports).
 */

export type { AttachExit, AttachHandlers, ProcessAttachment } from "./attach.js";
export {
  type CallOptions,
  type TarSessionOptions,
  WardenClient,
  type WardenClientOptions,
} from "./client.js";
export {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  PathOutsideWorkspaceError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitedError,
  retryAfterSeconds,
  ServerError,
  UnauthorizedError,
  WardenApiError,
} from "./errors.js";
export { SessionProcessesClient } from "./processes.js";
export { parseSse, type SseEvent } from "./sse.js";
export type * from "./types.js";
