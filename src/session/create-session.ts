/** `createSession`: a session on a real hardened sandbox with the seven built-in tools. */
import { dockerBackend } from "../sandbox/index.js";
import { builtinTools, optInTools } from "../tools/index.js";
import { openSession } from "./open-session.js";
import { createSpillStore } from "./spill-store.js";
import type { Session, SessionOptions } from "./types.js";

/**
 * Creates a sandbox (per `options`, hardened defaults), a spill store (under `options.spillDir` or a
 * private temp directory), registers the built-in tools (and the opt-in process tool), applies `options.toolSelection` and the hooks.
 * Close it with `close()` or `await using`; closing destroys the container and removes spill files.
 * Rejects with InvalidArgumentError (unknown tool in the selection) or the sandbox's WardenErrors.
 */
export function createSession(options: SessionOptions = {}): Promise<Session> {
  // The Docker backend's create is createSandbox (it pings the engine itself).
  const backend = dockerBackend({ kind: "docker" });
  return openSession(options, {
    createSandbox: (spec, identity, call) => backend.create(spec, identity, call),
    createSpillStore,
    builtinTools,
    optInTools,
  });
}
