/**
 * The warm pool's key: everything that is fixed when a container is created and that a session
 * must not get different from what it asked for. The tenant (its containers carry its label, so
 * `docker ps` and `warden gc --tenant` see pooled ones too), image, resolved limits, runtime,
 * workspace mode (and for ro/rw the bind-mounted host path), the extra mounts, the hash of the
 * policy the session runs under, and its network policy (src/egress: none or the allowlist). Two requests share pooled containers only when all of these are
 * equal, so a pooled container can never skip hardening or a policy, nor cross tenants.
 */
import { createHash } from "node:crypto";
import type { NetworkOptions } from "../../egress/index.js";
import { networkPolicyKey } from "../../egress/index.js";
import type { ReadOnlyMount, SandboxLimits, WorkspaceMode } from "../types.js";

/** The parts of a pool key, after defaults are applied. */
export interface PoolKeyParts {
  /** The io.warden.tenant label the pooled containers carry. */
  tenant: string;
  image: string;
  limits: SandboxLimits;
  runtime: "runc" | "runsc";
  workspaceMode: WorkspaceMode;
  /** Host path bind-mounted in `ro`/`rw` mode; not part of the key in `copy` mode (copied at claim). */
  workspaceHostPath?: string;
  mounts: ReadOnlyMount[];
  /** Hash of the session's policy (any stable string); "" for none. */
  policyHash: string;
  /** How calls reach the container ("channel" or "docker-exec"). */
  execPath?: string;
  /** The session's network policy (none when absent): a spare only goes to a matching session. */
  network?: NetworkOptions;
}

/** Stable key: `sha256:<hex>` over canonical JSON of the parts (object keys sorted). */
export function poolKey(parts: PoolKeyParts): string {
  const canonical = {
    tenant: parts.tenant,
    image: parts.image,
    limits: Object.fromEntries(Object.entries(parts.limits).sort(([a], [b]) => a.localeCompare(b))),
    runtime: parts.runtime,
    workspaceMode: parts.workspaceMode,
    workspaceHostPath: parts.workspaceMode === "copy" ? null : (parts.workspaceHostPath ?? null),
    mounts: [...parts.mounts]
      .map((m) => [m.hostPath, m.containerPath])
      .sort((a, b) => `${a[1]}\0${a[0]}`.localeCompare(`${b[1]}\0${b[0]}`)),
    policyHash: parts.policyHash,
    execPath: parts.execPath ?? "channel",
    network: networkPolicyKey(parts.network),
  };
  return `sha256:${createHash("sha256").update(JSON.stringify(canonical)).digest("hex")}`;
}
