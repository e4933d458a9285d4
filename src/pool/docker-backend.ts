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

/**
 * The sandbox options a key's entries are prepared from: everything but what belongs to one claim.
 * Pooling is copy mode only (a ro/rw bind mount would expose a host path long after it was checked),
 * so the workspace is never part of it.
 */
export type PoolTemplate = Omit<SandboxOptions, "sessionId" | "signal" | "workspace">;

/** A copy-mode workspace, copied into the claimed container at hand-over. */
export type CopyWorkspace = NonNullable<SandboxOptions["workspace"]> & { mode?: "copy" };

/**
 * What one claim adds to its key's template: never part of the key nor of a prepared entry. The
 * pool refills a key from its first request, whose workspace may be gone by then (an uploaded
 * workspace is removed when its session closes), so the workspace stays here.
 */
export interface PoolClaim {
  /** The claimer's session id (reported by the returned sandbox). Default: a random UUID. */
  sessionId?: string;
  /** Cancels the hand-over (or the cold start). */
  signal?: AbortSignal;
  /** Host directory copied into /workspace at hand-over. Without it the workspace starts empty. */
  workspace?: CopyWorkspace;
}

/** A claim: the key's template, the claim's own fields, and the hash of the policy it runs under. */
export interface PoolRequest {
  /** Sandbox options of the key (tenant, image, limits, runtime…). Part of the key. */
  template: PoolTemplate;
  claim?: PoolClaim;
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

/** A PoolBackend on Docker. See the file comment for labels and hand-over. */
export function dockerPoolBackend(
  options: DockerPoolOptions = {},
): PoolBackend<PoolRequest, PreparedSandbox> {
  const docker = options.docker ?? getDocker();
  const defaultTenant = options.tenant ?? "local";
  const templateOf = (request: PoolRequest): PoolTemplate => ({ tenant: defaultTenant, ...request.template });
  /** The claimer's sandbox options: the key's template with the claim's own fields. */
  const claimerOptions = (request: PoolRequest): SandboxOptions => ({
    ...templateOf(request),
    ...request.claim,
  });
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS + 60 * 60_000;

  /** The key of `sandboxOptions` (resolved and validated) under `request`'s policy. */
  const keyFrom = async (sandboxOptions: SandboxOptions, request: PoolRequest): Promise<string> => {
    const opts = await resolveSandboxOptions(sandboxOptions, "pool-key");
    const execPath = resolveExecPath(request.template.execPath);
    return poolKey({ ...opts, execPath, policyHash: request.policyHash ?? "" });
  };

  /**
   * The claim is validated with its template (a missing workspace is refused here, before an idle
   * entry is taken); copy mode leaves the host path out of the key, so it is the template's key.
   */
  const keyOf = async (request: PoolRequest): Promise<string> => {
    const mode = request.claim?.workspace?.mode ?? "copy";
    if (mode !== "copy") {
      throw new InvalidArgumentError(
        `a pooled sandbox takes a copy-mode workspace only, got mode ${JSON.stringify(mode)}; create a ${mode} sandbox with createSandbox instead.`,
      );
    }
    return keyFrom(claimerOptions(request), request);
  };

  return {
    keyOf,
    async prepare(request, signal) {
      // Not the claim's: the first claim's workspace may be gone when the key is refilled.
      const key = await keyFrom(templateOf(request), request);
      const sessionId = `pool-${randomUUID()}`;
      const opts = await resolveSandboxOptions({ ...templateOf(request), sessionId, ttlMs }, sessionId);
      return prepareSandbox(docker, opts, resolveExecPath(request.template.execPath), {
        signal,
        extraLabels: { [POOL_LABEL]: key.slice(0, 71) },
      });
    },
    async handOver(prepared, request): Promise<Sandbox> {
      const opts = await resolveSandboxOptions(
        claimerOptions(request),
        request.claim?.sessionId ?? randomUUID(),
      );
      const remainingMs = prepared.expiresAt.getTime() - Date.now();
      if (opts.ttlMs > remainingMs) {
        throw new InvalidArgumentError(
          `ttlMs ${opts.ttlMs} exceeds the pooled container's remaining lifetime ${remainingMs} ms.`,
        );
      }
      return finishSandbox(docker, prepared, opts, request.claim?.signal);
    },
    createCold: (request) => createSandbox(claimerOptions(request), docker),
    alive: (prepared) => !prepared.channel?.closed,
    async discard(prepared) {
      prepared.channel?.close();
      await removeSandboxResources(docker, prepared.container.id, prepared.volumeName);
    },
  };
}
