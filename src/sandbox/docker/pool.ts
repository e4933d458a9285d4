/**
 * The warm pool's Docker backend: entries are containers prepared by prepareSandbox (hardened,
 * started, warden-helper connected, empty workspace), labelled with the requests' tenant (part of
 * the key), a `pool-<uuid>` session id and `io.warden.pool=<key>` so tests, `warden gc` and the
 * server's reconcile find them. A claim pings the spare's helper (pingSpare: a spare whose processes
 * were stopped is not handed over), then runs finishSandbox with the claimer's options: the
 * workspace is copied in (copy mode) and the returned sandbox reports the claimer's session id
 * (Docker labels cannot change after create, so the container keeps its `pool-<uuid>` label).
 */
import type Docker from "dockerode";
import { resolveExecPath } from "../exec-path.js";
import { type PoolRequest, poolRequestKeys, SPARE_TTL_MS } from "../pool/pool-request.js";
import type { PoolBackend } from "../pool/warm-pool.js";
import { pingSpare } from "../spare-ping.js";
import type { Sandbox } from "../types.js";
import { createSandbox, finishSandbox } from "./create.js";
import { removeSandboxResources } from "./docker-sandbox.js";
import { getDocker } from "./engine.js";
import { type PreparedSandbox, prepareSandbox } from "./prepare.js";

/** Label on pooled containers and volumes: the pool key they were prepared for. */
export const POOL_LABEL = "io.warden.pool";

/** Options of the Docker pool backend. */
export interface DockerPoolOptions {
  docker?: Docker;
  /** Tenant of requests that name none (their containers' io.warden.tenant label). Default "local", as createSandbox's. */
  tenant?: string;
  /**
   * Label lifetime of pool containers, ms (gc removes them after it). Default 25 h: a claim asks
   * for at most the remaining lifetime, so this covers a default 24 h session claimed within an hour.
   */
  ttlMs?: number;
}

/** A PoolBackend on Docker. See the file comment for labels and hand-over. */
export function dockerPoolBackend(
  options: DockerPoolOptions = {},
): PoolBackend<PoolRequest, PreparedSandbox> {
  const docker = options.docker ?? getDocker();
  const { claimerOptions, keyOf, spareOf, claimOf } = poolRequestKeys(options.tenant ?? "local");
  const ttlMs = options.ttlMs ?? SPARE_TTL_MS;

  return {
    keyOf,
    async prepare(request, signal) {
      const { key, opts } = await spareOf(request, ttlMs);
      return prepareSandbox(docker, opts, resolveExecPath(request.template.execPath), {
        signal,
        extraLabels: { [POOL_LABEL]: key.slice(0, 71) },
        spare: true,
      });
    },
    async handOver(prepared, request): Promise<Sandbox> {
      const opts = await claimOf(request, prepared.expiresAt);
      const signal = request.claim?.signal;
      const what = `warm-pool spare container ${prepared.container.id.slice(0, 12)}`;
      if (prepared.channel) await pingSpare(prepared.channel, what, signal);
      // The spare's gateway answers to the claimer from now on: its approver, audit and secrets.
      if (prepared.egress && opts.network.mode === "allowlist")
        prepared.egress.bind({ sessionId: opts.sessionId, network: opts.network });
      return finishSandbox(docker, prepared, opts, signal);
    },
    createCold: (request) => createSandbox(claimerOptions(request), docker),
    alive: (prepared) => !prepared.channel?.closed && !prepared.egress?.closed,
    async discard(prepared) {
      prepared.channel?.close();
      await removeSandboxResources(docker, prepared.container.id, prepared.volumeName);
      await prepared.egress?.close();
    },
  };
}
