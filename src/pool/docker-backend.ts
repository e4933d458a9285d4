/**
 * The warm pool's Docker backend: entries are containers prepared by prepareSandbox (hardened,
 * started, warden-helper connected, empty workspace), labelled with the requests' tenant (part of
 * the key), a `pool-<uuid>` session id and `io.warden.pool=<key>` so tests, `warden gc` and the
 * server's reconcile find them. A claim runs finishSandbox with the claimer's options: the
 * workspace is copied in (copy mode) and the returned sandbox reports the claimer's session id
 * (Docker labels cannot change after create, so the container keeps its `pool-<uuid>` label).
 */
import { randomUUID } from "node:crypto";
import type Docker from "dockerode";
import { InvalidArgumentError } from "../errors.js";
import type { Sandbox, SandboxOptions } from "../sandbox/index.js";
import {
  createSandbox,
  DEFAULT_TTL_MS,
  finishSandbox,
  getDocker,
  type PreparedSandbox,
  prepareSandbox,
  removeSandboxResources,
  resolveExecPath,
  resolveSandboxOptions,
} from "../sandbox/index.js";
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
  /** Tenant of requests that name none (their containers' io.warden.tenant label). Default "local", as createSandbox's. */
  tenant?: string;
  /**
   * Label lifetime of pool containers, ms (gc removes them after it). Default 25 h: a claim asks
   * for at most the remaining lifetime, so this covers a default 24 h session claimed within an hour.
   */
  ttlMs?: number;
}

/**
 * What an entry is prepared from: the request without what belongs to one claim (session id, abort
 * signal) and, in copy mode, without the host directory, which is only read at hand-over. The
 * pool refills a key from its first request, whose directory may be gone by then (an uploaded
 * workspace is removed when its session closes). The key is unchanged: copy mode leaves the host
 * path out of it.
 */
function poolTemplate(request: PoolRequest): PoolRequest {
  const { sessionId: _session, signal: _signal, workspace, ...rest } = request;
  if (!workspace || (workspace.mode ?? "copy") === "copy") return rest;
  return { ...rest, workspace };
}

/** A PoolBackend on Docker. See the file comment for labels and hand-over. */
export function dockerPoolBackend(
  options: DockerPoolOptions = {},
): PoolBackend<PoolRequest, PreparedSandbox> {
  const docker = options.docker ?? getDocker();
  const defaultTenant = options.tenant ?? "local";
  const withTenant = (request: PoolRequest): PoolRequest => ({ tenant: defaultTenant, ...request });
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS + 60 * 60_000;

  const keyOf = async (request: PoolRequest): Promise<string> => {
    const opts = await resolveSandboxOptions(withTenant(request), "pool-key");
    const execPath = resolveExecPath(request.execPath);
    return poolKey({ ...opts, execPath, policyHash: request.policyHash ?? "" });
  };

  return {
    keyOf,
    async prepare(request, signal) {
      const template = poolTemplate(withTenant(request));
      const key = await keyOf(template);
      const sessionId = `pool-${randomUUID()}`;
      const opts = await resolveSandboxOptions({ ...template, sessionId, ttlMs }, sessionId);
      return prepareSandbox(docker, opts, resolveExecPath(request.execPath), {
        signal,
        extraLabels: { [POOL_LABEL]: key.slice(0, 71) },
      });
    },
    async handOver(prepared, request): Promise<Sandbox> {
      const opts = await resolveSandboxOptions(withTenant(request), request.sessionId ?? randomUUID());
      const remainingMs = prepared.expiresAt.getTime() - Date.now();
      if (opts.ttlMs > remainingMs) {
        throw new InvalidArgumentError(
          `ttlMs ${opts.ttlMs} exceeds the pooled container's remaining lifetime ${remainingMs} ms.`,
        );
      }
      return finishSandbox(docker, prepared, opts, request.signal);
    },
    createCold: (request) => createSandbox(withTenant(request), docker),
    alive: (prepared) => !prepared.channel?.closed,
    async discard(prepared) {
      prepared.channel?.close();
      await removeSandboxResources(docker, prepared.container.id, prepared.volumeName);
    },
  };
}
