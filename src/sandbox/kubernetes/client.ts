/**
 * @kubernetes/client-node, loaded on demand. Its modules hold about 25 MB of V8 heap, which a
 * process that never talks to a cluster (a Docker-backed `warden serve`, the CLI's other commands)
 * would otherwise carry, and which every major garbage collection marks again: the noisy-neighbour
 * bench found those collections' threads taking 0.4 of a core under a tenant's /changes load. So no
 * module imports it statically (test/unit/sandbox/kubernetes/lazy-client.test.ts): the entry points
 * that use a cluster await loadKubernetesClient() first, and connectCluster takes it from there.
 */

import type * as ClientNode from "@kubernetes/client-node";
import type { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import { importOptional, OPTIONAL_FEATURES } from "../../util/index.js";

/**
 * The module's exports, and its WebSocketHandler, which the package's index does not export
 * (request-deadline.ts boundedExec gives pods/exec a WebSocket factory whose opening has a deadline).
 */
export type KubernetesClient = typeof ClientNode & { WebSocketHandler: typeof WebSocketHandler };

let loaded: KubernetesClient | undefined;

/**
 * Loads @kubernetes/client-node (once; later calls resolve the same module). It is an optional
 * peer dependency: rejects PackageMissingError (code PACKAGE_MISSING, with the install command)
 * when it is not installed.
 */
export async function loadKubernetesClient(): Promise<KubernetesClient> {
  loaded ??= await importOptional(OPTIONAL_FEATURES.kubernetes, async () => ({
    ...(await import("@kubernetes/client-node")),
    WebSocketHandler: (await import("@kubernetes/client-node/dist/web-socket-handler.js")).WebSocketHandler,
  }));
  return loaded;
}

/**
 * The module loadKubernetesClient loaded. Throws Error (a programming error, not a user's) when it
 * has not been awaited yet in this process.
 */
export function kubernetesClient(): KubernetesClient {
  if (!loaded)
    throw new Error(
      "@kubernetes/client-node is loaded on demand: await loadKubernetesClient() (src/sandbox/kubernetes/client.ts) before connecting to a cluster.",
    );
  return loaded;
}
