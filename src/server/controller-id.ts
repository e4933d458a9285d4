/** The owner id a server labels its sandboxes with (io.warden.controller); reconcile.ts reads it back. */
import { createHash } from "node:crypto";
import { hostname } from "node:os";

/** The prefix of every server's controller id (a CLI process is labelled by its pid instead). */
export const SERVE_PREFIX = "serve@";

/**
 * The stable owner id a server labels its sandboxes with (io.warden.controller): the host and
 * its state directory, never a pid, so that `warden gc` leaves sessions a restarted server adopts.
 */
export function serverControllerId(stateDir: string): string {
  const digest = createHash("sha256").update(stateDir).digest("hex").slice(0, 12);
  return `${SERVE_PREFIX}${hostname()}-${digest}`;
}
