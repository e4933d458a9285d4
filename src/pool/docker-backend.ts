/**
 * The warm pool's Docker backend: entries are containers prepared by prepareSandbox (hardened,
 * started, warden-helper connected, empty workspace), labelled with the pool's tenant, a
 * `pool-<uuid>` session id and `io.warden.pool=<key>` so tests and `warden gc` find them. A claim
 * runs finishSandbox with the claimer's options: the workspace is copied in (copy mode) and the
 * returned sandbox reports the claimer's session id and tenant (Docker labels cannot change
 * after create, so the container keeps the pool's labels).
 */
import { randomUUID } from "node:crypto";
import type Docker from "dockerode";
import { InvalidArgumentError } from "../errors.js";
import { createSandbox, finishSandbox } from "../sandbox/create.js";
import { removeSandboxResources } from "../sandbox/docker-sandbox.js";
import { getDocker } from "../sandbox/engine.js";
import { DEFAULT_TTL_MS, resolveSandboxOptions } from "../sandbox/options.js";
import { type PreparedSandbox, prepareSandbox, resolveExecPath } from "../sandbox/prepare.js";
import type { Sandbox, SandboxOptions } from "../sandbox/types.js";
import { poolKey } from "./pool-key.js";
import type { PoolBackend } from "./warm-pool.js";

/** Label on pooled containers and volumes: the pool key they were prepared for. */
export const POOL_LABEL = "io.warden.pool";

/** A claim: the sandbox options of the session, plus the hash of the policy it runs under. */
export interface PoolRequest extends SandboxOptions {
  /** Any stable string identifying the session's policy; "" or absent for none. Part of the key. */
  policyHash?: string;
}

/** Options of the Docker pool backend. */
export interface DockerPoolOptions {
  docker?: Docker;
  /** Tenant label of idle pool containers. Default "warden-pool". */
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
  const tenant = options.tenant ?? "warden-pool";
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS + 60 * 60_000;

  const keyOf = async (request: PoolRequest): Promise<string> => {
    const opts = await resolveSandboxOptions(request, "pool-key");
    const execPath = resolveExecPath(request.execPath);
    return poolKey({ ...opts, execPath, policyHash: request.policyHash ?? "" });
  };

  return {
    keyOf,
    async prepare(request, signal) {
      const key = await keyOf(request);
      const sessionId = `pool-${randomUUID()}`;
      const opts = await resolveSandboxOptions({ ...request, sessionId, tenant, ttlMs }, sessionId);
      return prepareSandbox(docker, opts, resolveExecPath(request.execPath), {
        signal,
        extraLabels: { [POOL_LABEL]: key.slice(0, 71) },
      });
    },
    async handOver(prepared, request): Promise<Sandbox> {
      const opts = await resolveSandboxOptions(request, request.sessionId ?? randomUUID());
      const remainingMs = prepared.expiresAt.getTime() - Date.now();
      if (opts.ttlMs > remainingMs) {
        throw new InvalidArgumentError(
          `ttlMs ${opts.ttlMs} exceeds the pooled container's remaining lifetime ${remainingMs} ms.`,
        );
      }
      return finishSandbox(docker, prepared, opts, request.signal);
    },
    createCold: (request) => createSandbox(request, docker),
    alive: (prepared) => !prepared.channel?.closed,
    async discard(prepared) {
      prepared.channel?.close();
      await removeSandboxResources(docker, prepared.container.id, prepared.volumeName);
    },
  };
}
