/**
 * Turns a create-session request into sandbox options within the tenant's rights: an allowed image
 * and workspace mode, a workspace path under one of the tenant's roots (canonical, compared by whole
 * path components), and limits within the tenant's caps. Each refusal is an InvalidArgumentError
 * (HTTP 400) naming the field.
 */
import { realpath, stat } from "node:fs/promises";
import { InvalidArgumentError } from "../../errors.js";
import type { ToolSelection } from "../../pipeline/index.js";
import {
  DEFAULT_LIMITS,
  minPidsFor,
  pidsBudgetText,
  resolveLimits,
  type SandboxLimits,
  type WorkspaceMode,
} from "../../sandbox/index.js";
import { validateSessionEnv } from "../../session/index.js";
import { isWithinRoot } from "../../tools/index.js";
import type { TenantConfig } from "../config/index.js";
import type { SessionSecretRequest } from "../secrets/index.js";

/** The options a client may send (JSON body, or query string with a tar body). */
export interface CreateSessionInput {
  image?: string;
  workspaceMode?: WorkspaceMode;
  /** Server-side directory to use as the workspace; must lie under one of the tenant's workspaceRoots. */
  workspacePath?: string;
  limits?: Partial<SandboxLimits>;
  tools?: ToolSelection;
  /** Non-secret environment variables (validated by the session: src/session/session-env.ts). */
  env?: Record<string, string>;
  /** Domains the session asks to reach, within the tenant's network bound (config/network.ts). */
  network?: { allow: string[] };
  /** Secrets of the tenant's store the session may use through its gateway (needs `network`). */
  secrets?: SessionSecretRequest[];
}

/** The validated choice. */
export interface ResolvedSessionRequest {
  image: string;
  workspaceMode: WorkspaceMode;
  workspaceHostPath?: string;
  /** The workspace is an uploaded tar unpacked by the server (removed when the session closes). */
  uploaded?: boolean;
  limits: Partial<SandboxLimits>;
  tools?: ToolSelection;
  env?: Record<string, string>;
  /** The session's requested network allow entries. */
  networkAllow?: string[];
  /** The secrets it asked for (names checked against the store when it is created). */
  secrets?: SessionSecretRequest[];
}

/** The tenant's cap on each limit. Every limit has one: /tmp is memory and pids bound forks (red team). */
function capsOf(tenant: TenantConfig): SandboxLimits {
  const { cpus, memoryBytes, workspaceBytes, tmpBytes, pids } = tenant.quotas;
  return { cpus, memoryBytes, workspaceBytes, tmpBytes, pids };
}

/**
 * Limits a session gets when it asks for none: the sandbox default, capped by the tenant; pids at
 * least minPidsFor(maxConcurrentToolCalls), so a batch the server accepts fits the session.
 */
export function defaultLimits(tenant: TenantConfig): SandboxLimits {
  const caps = capsOf(tenant);
  const limits = { ...DEFAULT_LIMITS };
  for (const field of Object.keys(caps) as (keyof SandboxLimits)[]) {
    limits[field] = Math.min(DEFAULT_LIMITS[field], caps[field]);
  }
  limits.pids = Math.min(caps.pids, Math.max(limits.pids, minPidsFor(tenant.quotas.maxConcurrentToolCalls)));
  return limits;
}

/** Checks requested limits against the tenant's caps; throws InvalidArgumentError naming `limits.<field>`. */
function checkLimits(tenant: TenantConfig, limits: Partial<SandboxLimits> = {}): Partial<SandboxLimits> {
  for (const [field, cap] of Object.entries(capsOf(tenant)) as [keyof SandboxLimits, number][]) {
    const value = limits[field];
    if (value !== undefined && value > cap) {
      throw new InvalidArgumentError(
        `limits.${field} ${value} exceeds tenant '${tenant.id}' cap ${cap}; ask for at most ${cap}.`,
      );
    }
  }
  const merged = { ...defaultLimits(tenant), ...limits };
  const minPids = minPidsFor(tenant.quotas.maxConcurrentToolCalls);
  if (merged.pids < minPids) {
    throw new InvalidArgumentError(
      `limits.pids ${merged.pids} is too small for tenant '${tenant.id}''s maxConcurrentToolCalls ` +
        `${tenant.quotas.maxConcurrentToolCalls}: ${pidsBudgetText(tenant.quotas.maxConcurrentToolCalls)}; ask for at least ${minPids}.`,
    );
  }
  resolveLimits(merged); // the sandbox's own checks (e.g. Docker's minimums), before anything starts
  return merged;
}

/**
 * Validates `input` for `tenant`. `uploaded` is the host directory an uploaded tar was unpacked into
 * (only `copy` mode is allowed for it). Throws InvalidArgumentError naming the offending field.
 */
export async function resolveSessionRequest(
  tenant: TenantConfig,
  input: CreateSessionInput,
  uploaded?: string,
): Promise<ResolvedSessionRequest> {
  const image = input.image ?? tenant.images[0]!;
  if (!tenant.images.includes(image)) {
    throw new InvalidArgumentError(
      `image '${image}' is not allowed for tenant '${tenant.id}'; allowed: ${tenant.images.join(", ")}.`,
    );
  }
  const workspaceMode = input.workspaceMode ?? "copy";
  if (!tenant.workspaceModes.includes(workspaceMode)) {
    throw new InvalidArgumentError(
      `workspaceMode '${workspaceMode}' is not allowed for tenant '${tenant.id}'; allowed: ${tenant.workspaceModes.join(", ")}.`,
    );
  }
  const limits = checkLimits(tenant, input.limits);
  if (input.env) validateSessionEnv(input.env);
  checkSecretsNeedNetwork(input);
  const base = {
    image,
    workspaceMode,
    limits,
    ...(input.tools ? { tools: input.tools } : {}),
    ...(input.env ? { env: input.env } : {}),
    ...(input.network?.allow.length ? { networkAllow: input.network.allow } : {}),
    ...(input.secrets?.length ? { secrets: input.secrets } : {}),
  };
  if (uploaded !== undefined) {
    if (input.workspacePath !== undefined) {
      throw new InvalidArgumentError(
        "workspacePath cannot be combined with an uploaded tar body; send one of them.",
      );
    }
    if (workspaceMode !== "copy") {
      throw new InvalidArgumentError(
        `workspaceMode must be 'copy' for an uploaded workspace, got '${workspaceMode}'.`,
      );
    }
    return { ...base, workspaceHostPath: uploaded, uploaded: true };
  }
  if (input.workspacePath === undefined) return base;
  return { ...base, workspaceHostPath: await allowedWorkspace(tenant, input.workspacePath) };
}

/**
 * A secret is only ever usable through the session's egress gateway: `secrets` without
 * `network.allow` is an InvalidArgumentError, as is a placeholder variable that `env` also sets.
 */
function checkSecretsNeedNetwork(input: CreateSessionInput): void {
  if (!input.secrets?.length) return;
  if (!input.network?.allow.length)
    throw new InvalidArgumentError({
      field: "secrets",
      problem:
        "need network.allow: a secret is only used by the session's egress gateway, on requests to its bound hosts; list those hosts in network.allow.",
    });
  for (const [i, s] of input.secrets.entries()) {
    const variable = s.env === undefined ? s.name : s.env;
    if (variable !== false && input.env && Object.hasOwn(input.env, variable))
      throw new InvalidArgumentError({
        field: `secrets[${i}]`,
        problem: `puts its placeholder in ${variable}, which env also sets; drop it from env or give the secret another env.`,
      });
  }
}

async function allowedWorkspace(tenant: TenantConfig, requested: string): Promise<string> {
  const refuse = (why: string) =>
    new InvalidArgumentError(
      `workspacePath '${requested}' ${why}; use a directory under one of the tenant's workspaceRoots.`,
    );
  if (!requested.startsWith("/")) throw refuse("is not absolute");
  let canonical: string;
  try {
    canonical = await realpath(requested);
  } catch {
    throw refuse("does not exist");
  }
  const roots = await Promise.all(tenant.workspaceRoots.map((r) => realpath(r).catch(() => null)));
  if (!roots.some((root) => root !== null && isWithinRoot(canonical, root))) throw refuse("is not allowed");
  if (!(await stat(canonical)).isDirectory()) throw refuse("is not a directory");
  return canonical;
}
