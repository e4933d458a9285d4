/**
 * The egress section's session-start phase (issue 40's third target): the time `createSession`
 * (cold: no pool) and `openSession` over a Docker backend with a warm pool of size 1 (the claim
 * `warden serve` makes) take to resolve, for a session with network (its gateway started) against
 * the same session without network, alternating; beside them, the engine's share of a gateway
 * (its network and container, no gateway process: what any per-session gateway container pays).
 * The pool keeps spares with network (`warmPool.networked`: each with its gateway started, bound to
 * the claimer at the claim). Every timed claim waits first until the key holds an idle spare
 * again, so each one is a claim from the pool; a kind whose key shows no spare within POOL_WAIT_MS
 * after its first claim is reported as not available.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type Docker from "dockerode";
import { GATEWAY_IMAGE } from "../../src/egress/index.js";
import {
  dockerBackend,
  getDocker,
  type Sandbox,
  type SandboxBackend,
  type SandboxSpec,
} from "../../src/sandbox/index.js";
import { createSession, createSpillStore, openSession, type Session } from "../../src/session/index.js";
import { builtinTools } from "../../src/tools/index.js";
import { type BenchRow, percentile } from "../harness.js";

/** How long a key may take to show its first idle spare before the pool counts as not holding it. */
const POOL_WAIT_MS = 20_000;
const WITHOUT = "same session without network";

/** The phase's rows; `network` is the networked sessions' spec part. `starts`: timed starts per kind. */
export async function startRows(
  tenant: string,
  network: NonNullable<SandboxSpec["network"]>,
  starts: number,
): Promise<BenchRow[]> {
  const cold = { with: [] as number[], without: [] as number[], dockerSteps: [] as number[] };
  const egressNetwork = network.mode === "allowlist" ? network.egressNetworks?.[0] : undefined;
  if (!egressNetwork) throw new Error("the start phase needs a network with an egress network");
  for (let i = 0; i < starts; i++) {
    cold.without.push(await timedStart(() => createSession({ tenant })));
    cold.with.push(await timedStart(() => createSession({ tenant, sandbox: { network } })));
    cold.dockerSteps.push(await gatewayDockerStepsMs(egressNetwork));
  }
  const median = (xs: number[]) => percentile(xs, 50);
  const rows: BenchRow[] = [
    {
      name: `session start with network, cold (median of ${starts})`,
      value: median(cold.with),
      unit: "ms",
      baseline: median(cold.without),
      baselineName: WITHOUT,
    },
    {
      name: `of which Docker's steps for a gateway, no gateway process (median of ${starts})`,
      value: median(cold.dockerSteps),
      unit: "ms",
      baseline: median(cold.without),
      baselineName: WITHOUT,
    },
  ];
  const pool = await poolStarts(tenant, network, starts);
  const name = `session start with network, from the warm pool (median of ${starts})`;
  if (pool.with.length === 0) {
    rows.push({
      name,
      value: Number.NaN,
      unit: "ms",
      note: `not available: no spare with network within ${POOL_WAIT_MS / 1000} s`,
    });
    rows.push({
      name: `session start without network, from the warm pool (median of ${starts})`,
      value: median(pool.without),
      unit: "ms",
      baseline: median(cold.without),
      baselineName: "same session without network, cold",
    });
  } else {
    rows.push({
      name,
      value: median(pool.with),
      unit: "ms",
      baseline: median(pool.without),
      baselineName: `${WITHOUT}, from the warm pool`,
    });
  }
  return rows;
}

/**
 * ms the engine takes for what a session's gateway needs besides its process: an internal network
 * (as src/egress/gateway-container.ts makes it), a container of the gateway image on it (hardened,
 * running `sleep`), connected to `egressNetwork`, started. Both are removed afterwards (not timed).
 */
async function gatewayDockerStepsMs(egressNetwork: string): Promise<number> {
  const docker = getDocker();
  const name = `warden-bench-steps-${randomBytes(4).toString("hex")}`;
  const labels = { "io.warden.test": "egress-bench" };
  let container: Docker.Container | undefined;
  const t0 = performance.now();
  try {
    await docker.createNetwork({
      Name: name,
      Driver: "bridge",
      Internal: true,
      Labels: labels,
      Options: { "com.docker.network.bridge.inhibit_ipv4": "true" },
    });
    const created = await docker.createContainer({
      Image: GATEWAY_IMAGE,
      Entrypoint: ["sleep", "infinity"],
      Labels: labels,
      HostConfig: {
        NetworkMode: name,
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges"],
      },
    });
    container = created;
    await docker.getNetwork(egressNetwork).connect({ Container: created.id });
    await created.start();
    return performance.now() - t0;
  } finally {
    await container?.remove({ force: true }).catch(() => {});
    await docker
      .getNetwork(name)
      .remove()
      .catch(() => {});
  }
}

/** ms until `start` resolves; the session is closed afterwards (not timed). */
async function timedStart(start: () => Promise<Session>): Promise<number> {
  const t0 = performance.now();
  const session = await start();
  const ms = performance.now() - t0;
  await session.close();
  return ms;
}

/** A backend with a warm pool of 1 per key, and a session opener over its `claim`. */
function pooledOpener(tenant: string) {
  const backend = dockerBackend(
    { kind: "docker" },
    { warmPool: { size: 1, maxIdleMs: 30 * 60_000, ttlMs: 25 * 3_600_000, networked: 1 } },
  );
  let lastPooled = false;
  const open = (sandbox: SandboxSpec) =>
    openSession(
      { tenant, sandbox },
      {
        async createSandbox(spec, identity, call): Promise<Sandbox> {
          const claim = await backend.claim(spec, identity, call.signal ? { signal: call.signal } : {});
          lastPooled = claim.pooled;
          return claim.sandbox;
        },
        createSpillStore,
        builtinTools,
      },
    );
  return { backend, open, pooled: () => lastPooled };
}

/** Resolves true once `backend` holds an idle spare, false after `ms`. */
async function spareWithin(backend: SandboxBackend, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (backend.poolStats().idle > 0) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Timed claims from the warm pool, alternating without and with network; empty for a kind the pool does not hold. */
async function poolStarts(tenant: string, network: NonNullable<SandboxSpec["network"]>, starts: number) {
  const kinds = {
    without: { spec: {} as SandboxSpec, opener: pooledOpener(tenant), ms: [] as number[], held: true },
    with: { spec: { network } as SandboxSpec, opener: pooledOpener(tenant), ms: [] as number[], held: true },
  };
  try {
    // The first claim of a key is cold and makes the pool keep spares of it.
    for (const kind of Object.values(kinds)) {
      await (await kind.opener.open(kind.spec)).close();
      kind.held = await spareWithin(kind.opener.backend, POOL_WAIT_MS);
    }
    if (!kinds.without.held) throw new Error("the warm pool kept no spare of a session without network");
    for (let i = 0; i < starts; i++) {
      for (const kind of [kinds.without, kinds.with]) {
        if (!kind.held) continue;
        if (!(await spareWithin(kind.opener.backend, POOL_WAIT_MS)))
          throw new Error("the warm pool did not refill within its wait");
        const ms = await timedStart(() => kind.opener.open(kind.spec));
        if (!kind.opener.pooled()) throw new Error("a claim with an idle spare started cold");
        kind.ms.push(ms);
      }
    }
  } finally {
    await Promise.all(Object.values(kinds).map((k) => k.opener.backend.close()));
  }
  return { without: kinds.without.ms, with: kinds.with.ms };
}
