/**
 * The bound on warm-pool spares with network egress, across every tenant of one backend: each such
 * spare holds an engine network (its gateway's) that no session quota counts, and a tenant can make
 * new pool keys at will by varying its allowlist, so without a shared bound spares could use up
 * the engine's address pools that sessions need (attack on the networked pool, finding 3).
 */
import type { PoolRequest } from "./pool-request.js";
import type { PoolBackend } from "./warm-pool.js";

/** The reason a spare with network was not prepared (PoolBackend.noRoom: its key backs off). */
class NetworkedSparesFull extends Error {}

/** True for a request whose sandbox has network egress. */
function networked(request: PoolRequest): boolean {
  return (request.template.network?.mode ?? "none") !== "none";
}

/**
 * `backend` with at most `max` spares with network held at once by every backend wrapped with the
 * same `held` counter (a spare counts from its prepare until it is handed over or discarded). A
 * prepare over the bound fails as "no room", so its key backs off and claims start cold.
 */
export function limitNetworkedSpares<P>(
  backend: PoolBackend<PoolRequest, P>,
  held: { count: number; entries: Set<P> },
  max: number,
): PoolBackend<PoolRequest, P> {
  const release = (prepared: P) => {
    if (held.entries.delete(prepared)) held.count--;
  };
  return {
    ...backend,
    async prepare(request, signal) {
      if (!networked(request)) return backend.prepare(request, signal);
      if (held.count >= max)
        throw new NetworkedSparesFull(
          `${held.count} warm-pool spares with network are held, the most warmPool.networked allows`,
        );
      held.count++;
      let prepared: P;
      try {
        prepared = await backend.prepare(request, signal);
      } catch (err) {
        held.count--;
        throw err;
      }
      held.entries.add(prepared);
      return prepared;
    },
    handOver(prepared, request) {
      release(prepared);
      return backend.handOver(prepared, request);
    },
    discard(prepared) {
      release(prepared);
      return backend.discard(prepared);
    },
    noRoom: (err) => (err instanceof NetworkedSparesFull ? err.message : backend.noRoom?.(err)),
  };
}
