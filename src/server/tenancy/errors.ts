/** The errors of a tenant's access: no valid key (401), a quota full (429 with Retry-After). */
import { WardenError } from "../../errors.js";

/** A missing or unknown key (HTTP 401). */
export class UnauthorizedError extends WardenError {
  constructor(
    message = "Missing or unknown API key. Send 'Authorization: Bearer <key>' with a configured key.",
  ) {
    super("UNAUTHORIZED", message);
  }
}

/** A tenant quota is full (HTTP 429); `retryAfterSeconds` goes in the Retry-After header. */
export class QuotaExceededError extends WardenError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super("RATE_LIMITED", message);
  }
}
