/**
 * Validation of SandboxOptions before anything is created: each bad value is an
 * InvalidArgumentError or NotFoundError naming the field and the fix.
 */
import { stat } from "node:fs/promises";
import { isAbsolute, posix, resolve } from "node:path";
import type { NetworkOptions } from "../egress/index.js";
import { resolveNetworkOptions } from "../egress/index.js";
import { InvalidArgumentError, NotFoundError } from "../errors.js";
import { controllerId } from "./labels.js";
import { resolveLimits } from "./limits.js";
import type { ReadOnlyMount, SandboxLimits, SandboxOptions, WorkspaceMode } from "./types.js";
import { WORKSPACE_DIR } from "./types.js";
import { type ExcludePredicate, excludeMatcher } from "./workspace-exclude.js";
import { requireWorkspaceFits } from "./workspace-size.js";

/** The default sandbox image, built by `warden images build` from images/sandbox/Dockerfile. */
export const DEFAULT_IMAGE = "warden-sandbox:latest";
/** Default lifetime before `warden gc` may remove a sandbox: 24 h. */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;

/** Options after validation and defaults. Host paths are absolute. */
export interface ResolvedSandboxOptions {
  image: string;
  workspaceMode: WorkspaceMode;
  workspaceHostPath?: string;
  /** What copy mode leaves out (workspace.exclude / excludeIf). */
  workspaceExclude?: ExcludePredicate;
  mounts: ReadOnlyMount[];
  limits: SandboxLimits;
  runtime: "runc" | "runsc";
  sessionId: string;
  tenant: string;
  ttlMs: number;
  controllerId: string;
  /** The network: `none` (default) or an allowlist for the session's egress gateway. */
  network: NetworkOptions;
}

const LABEL_VALUE = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;

/**
 * An image reference as Docker reads one: `[registry[:port]/]path[:tag][@digest]` with lower-case
 * path components, or an image id (64 hex digits, optionally `sha256:`). Grammar from
 * github.com/distribution/reference (regexp.go), without IPv6 registries.
 */
const IMAGE_REFERENCE = new RegExp(
  "^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?" +
    "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*" +
    "(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?" +
    "|(?:sha256:)?[0-9a-f]{64})$",
);

/** Validates and fills defaults. Rejects InvalidArgumentError / NotFoundError naming the field. */
export async function resolveSandboxOptions(
  options: SandboxOptions,
  sessionId: string,
): Promise<ResolvedSandboxOptions> {
  const limits = resolveLimits(options.limits);
  const runtime = options.runtime ?? "runc";
  if (runtime !== "runc" && runtime !== "runsc") {
    throw new InvalidArgumentError({
      field: "runtime",
      problem: `must be "runc" or "runsc", got ${JSON.stringify(runtime)}.`,
    });
  }
  const mode = options.workspace?.mode ?? "copy";
  if (!["ro", "copy", "rw"].includes(mode)) {
    throw new InvalidArgumentError({
      field: "workspace.mode",
      problem: `must be "ro", "copy" or "rw", got ${JSON.stringify(mode)}.`,
    });
  }
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new InvalidArgumentError(`ttlMs must be a positive number of milliseconds, got ${ttlMs}.`);
  }
  const tenant = options.tenant ?? "local";
  if (!LABEL_VALUE.test(tenant)) {
    throw new InvalidArgumentError({
      field: "tenant",
      problem: `must match ${LABEL_VALUE.source} (letters, digits and _.:@- after a letter or digit, at most 128), got ${JSON.stringify(tenant)}.`,
    });
  }
  if (!LABEL_VALUE.test(sessionId)) {
    throw new InvalidArgumentError(
      `sessionId must match ${LABEL_VALUE.source}, got ${JSON.stringify(sessionId)}.`,
    );
  }
  const image = options.image ?? DEFAULT_IMAGE;
  if (typeof image !== "string" || image.trim() === "") {
    throw new InvalidArgumentError({
      field: "image",
      problem: "must be a non-empty image reference such as warden-sandbox:latest.",
    });
  }
  if (image.length > 512 || !IMAGE_REFERENCE.test(image)) {
    throw new InvalidArgumentError({
      field: "image",
      problem: `must be an image reference such as ${DEFAULT_IMAGE} or registry.example:5000/team/tool:1.2 (lower-case name, then :tag or @sha256:digest), got ${JSON.stringify(image)}.`,
    });
  }
  const resolved: ResolvedSandboxOptions = {
    image,
    workspaceMode: mode,
    mounts: [],
    limits,
    runtime,
    sessionId,
    tenant,
    ttlMs,
    controllerId: options.controllerId ?? controllerId(),
    network: await resolveNetworkOptions(options.network),
  };
  if (!LABEL_VALUE.test(resolved.controllerId)) {
    throw new InvalidArgumentError(
      `controllerId must match ${LABEL_VALUE.source}, got ${JSON.stringify(options.controllerId)}.`,
    );
  }
  if (options.workspace) {
    resolved.workspaceHostPath = await requireDirectory(options.workspace.hostPath, "workspace.hostPath");
    const { exclude, excludeIf } = options.workspace;
    if ((exclude?.length || excludeIf) && mode !== "copy")
      throw new InvalidArgumentError({
        field: "workspace.exclude",
        problem: `works in copy mode only (mode is "${mode}": the directory is mounted whole); use mode "copy" or drop the exclusions.`,
      });
    const matcher = excludeMatcher(exclude, excludeIf);
    if (matcher) resolved.workspaceExclude = matcher;
    if (mode === "copy")
      await requireWorkspaceFits(resolved.workspaceHostPath, limits.workspaceBytes, matcher);
  }
  const seen = new Set<string>([WORKSPACE_DIR]);
  for (const [i, m] of (options.mounts ?? []).entries()) {
    const hostPath = await requireDirectory(m.hostPath, `mounts[${i}].hostPath`);
    const cp = m.containerPath;
    if (
      typeof cp !== "string" ||
      !posix.isAbsolute(cp) ||
      posix.normalize(cp) !== cp ||
      cp === "/" ||
      cp.includes(",")
    ) {
      throw new InvalidArgumentError(
        `mounts[${i}].containerPath must be a normalised absolute container path other than /, got ${JSON.stringify(cp)}.`,
      );
    }
    if ([...seen].some((s) => s === cp || cp.startsWith(`${s}/`) || s.startsWith(`${cp}/`))) {
      throw new InvalidArgumentError(
        `mounts[${i}].containerPath ${cp} overlaps ${WORKSPACE_DIR} or another mount; pick a separate path.`,
      );
    }
    seen.add(cp);
    resolved.mounts.push({ hostPath, containerPath: cp });
  }
  return resolved;
}

async function requireDirectory(path: string, field: string): Promise<string> {
  if (typeof path !== "string" || path === "") {
    throw new InvalidArgumentError({ field, problem: "must be a host directory path." });
  }
  const abs = isAbsolute(path) ? path : resolve(path);
  const st = await stat(abs).catch(() => null);
  if (!st)
    throw new NotFoundError({ field, problem: `${abs} does not exist; pass an existing host directory.` });
  if (!st.isDirectory())
    throw new InvalidArgumentError({ field, problem: `${abs} is not a directory; pass a directory.` });
  return abs;
}
