/**
 * A warm pool request: what part of it is the key's template, what the claim adds, and the pool
 * key both the Docker and the Kubernetes pool backends compute from it (resolved sandbox options
 * with the policy hash, pool-key.ts).
 */
import { randomUUID } from "node:crypto";
import { InvalidArgumentError } from "../../errors.js";
import { resolveExecPath } from "../exec-path.js";
import { DEFAULT_TTL_MS, type ResolvedSandboxOptions, resolveSandboxOptions } from "../options.js";
import type { SandboxOptions } from "../types.js";
import { poolKey } from "./pool-key.js";

/** Default lifetime of a spare, ms, on both pool backends: the sandbox default plus one hour (25 h). */
export const SPARE_TTL_MS = DEFAULT_TTL_MS + 60 * 60_000;

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
interface PoolClaim {
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

/** The key functions of requests whose template names no tenant of its own (`defaultTenant` then). */
export function poolRequestKeys(defaultTenant: string): {
  templateOf(request: PoolRequest): PoolTemplate;
  claimerOptions(request: PoolRequest): SandboxOptions;
  keyFrom(sandboxOptions: SandboxOptions, request: PoolRequest): Promise<string>;
  keyOf(request: PoolRequest): Promise<string>;
  spareOf(request: PoolRequest, ttlMs: number): Promise<{ key: string; opts: ResolvedSandboxOptions }>;
  claimOf(request: PoolRequest, expiresAt: Date): Promise<ResolvedSandboxOptions>;
} {
  const templateOf = (request: PoolRequest): PoolTemplate => ({ tenant: defaultTenant, ...request.template });
  /** The claimer's sandbox options: the key's template with the claim's own fields. */
  const claimerOptions = (request: PoolRequest): SandboxOptions => ({
    ...templateOf(request),
    ...request.claim,
  });
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

  /**
   * A spare's key and options: the template's (not the claim's: the first claim's workspace may be
   * gone when the key is refilled), a `pool-<uuid>` session id and the spares' lifetime `ttlMs`.
   */
  const spareOf = async (request: PoolRequest, ttlMs: number) => {
    const key = await keyFrom(templateOf(request), request);
    const sessionId = `pool-${randomUUID()}`;
    const opts = await resolveSandboxOptions({ ...templateOf(request), sessionId, ttlMs }, sessionId);
    return { key, opts };
  };

  /** The claimer's resolved options; InvalidArgumentError when it asks to outlive the spare (`expiresAt`). */
  const claimOf = async (request: PoolRequest, expiresAt: Date) => {
    const opts = await resolveSandboxOptions(
      claimerOptions(request),
      request.claim?.sessionId ?? randomUUID(),
    );
    const remainingMs = expiresAt.getTime() - Date.now();
    if (opts.ttlMs > remainingMs) {
      throw new InvalidArgumentError(
        `ttlMs ${opts.ttlMs} exceeds the pooled container's remaining lifetime ${remainingMs} ms.`,
      );
    }
    return opts;
  };

  return { templateOf, claimerOptions, keyFrom, keyOf, spareOf, claimOf };
}
