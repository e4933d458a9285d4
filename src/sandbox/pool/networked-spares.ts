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
 * A bound of `max` spares with network held at once over every backend it `limit`s (one per
 * tenant): a spare counts from its prepare until it is handed over or discarded. A prepare over
 * the bound fails as "no room", so its key backs off and claims start cold.
 */
export function networkedSpareBound(max: number): {
  limit<P>(backend: PoolBackend<PoolRequest, P>): PoolBackend<PoolRequest, P>;
} {
  let preparing = 0;
  const held = new Set<unknown>();
  return {
    limit(backend) {
      return {
        ...backend,
        async prepare(request, signal) {
          if (!networked(request)) return backend.prepare(request, signal);
          if (preparing + held.size >= max)
            throw new NetworkedSparesFull(
              `${preparing + held.size} warm-pool spares with network are held, the most warmPool.networked allows`,
            );
          preparing++;
          try {
            const prepared = await backend.prepare(request, signal);
            held.add(prepared);
            return prepared;
          } finally {
            preparing--;
          }
        },
        handOver(prepared, request) {
          held.delete(prepared);
          return backend.handOver(prepared, request);
        },
        discard(prepared) {
          held.delete(prepared);
          return backend.discard(prepared);
        },
        noRoom: (err) => (err instanceof NetworkedSparesFull ? err.message : backend.noRoom?.(err)),
      };
    },
  };
}
