/**
 * Path handling for the tools: Pi's input normalisation, then confinement, which Pi lacks.
 * A path is allowed only when its canonical target, resolved inside the sandbox (symlinks and `..`
 * followed), is one of the sandbox's roots or lies under one, compared by whole path components
 * (CVE-2025-53109: symlink escape; CVE-2025-53110: `/workspace-evil` passing a prefix check).
 */
import { posix } from "node:path";
import { PathOutsideWorkspaceError } from "../errors.js";
import { type FileStat, type Sandbox, WORKSPACE_DIR } from "../sandbox/index.js";
import { omitUndefined } from "../util/index.js";

// Unicode space characters models sometimes emit in paths (Pi normalises them to ASCII space).
const UNICODE_SPACES = /[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g;

/**
 * Pi's normalisation of a path argument, without touching the sandbox: unicode spaces become
 * spaces, a leading "@" is stripped, "~" means the workspace (warden has no other home for tools),
 * and a relative path resolves against /workspace. Returns a normalised absolute container path.
 */
export function normalizeToolPath(input: string, cwd: string = WORKSPACE_DIR): string {
  let p = input.replace(UNICODE_SPACES, " ");
  if (p.startsWith("@")) p = p.slice(1);
  if (p === "~") p = WORKSPACE_DIR;
  else if (p.startsWith("~/")) p = posix.join(WORKSPACE_DIR, p.slice(2));
  return posix.resolve(cwd, p === "" ? "." : p);
}

/** True when `path` is `root` or lies under it, by whole path components. Both must be normalised and absolute. */
export function isWithinRoot(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** True when `path` is within any of `roots`. */
export function isWithinRoots(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => isWithinRoot(path, root));
}

/** A tool path after normalisation and confinement. */
export interface ResolvedToolPath {
  /** Normalised absolute path as the model named it (symlinks not followed). */
  requested: string;
  /** Canonical target resolved inside the sandbox. Use this for I/O. */
  canonical: string;
}

/**
 * Normalises `input` and resolves it inside the sandbox; rejects with PathOutsideWorkspaceError
 * (naming the resolved target) when the canonical target is outside the sandbox's roots.
 * Works for paths that do not exist yet (their deepest existing ancestor is resolved).
 */
export async function resolveToolPath(
  sandbox: Sandbox,
  input: string,
  options: { signal?: AbortSignal } = {},
): Promise<ResolvedToolPath> {
  const requested = normalizeToolPath(input);
  // Check the lexical path first: a path that is outside before resolution never reaches the engine.
  if (!isWithinRoots(requested, sandbox.info.roots)) {
    throw new PathOutsideWorkspaceError(input, requested);
  }
  const canonical = await sandbox.realpath(requested, options);
  if (!isWithinRoots(canonical, sandbox.info.roots)) {
    throw new PathOutsideWorkspaceError(input, canonical);
  }
  return { requested, canonical };
}

/**
 * resolveToolPath, then the canonical target's stat (null when it does not exist yet): the first
 * step of every tool but bash and read. Errors as resolveToolPath.
 */
export async function statToolPath(
  sandbox: Sandbox,
  input: string,
  signal?: AbortSignal,
): Promise<ResolvedToolPath & { stat: FileStat | null }> {
  const resolved = await resolveToolPath(sandbox, input, omitUndefined({ signal }));
  return { ...resolved, stat: await sandbox.stat(resolved.canonical, omitUndefined({ signal })) };
}

/**
 * Other spellings of a path that read tries, in order, when the path as given does not exist
 * (Pi 0.73.1's resolveReadPath, for names made on macOS): a narrow no-break space before "AM."/"PM."
 * (screenshot names), the NFD form (macOS stores names decomposed), U+2019 for "'", and NFD with
 * U+2019. Excludes `path` itself and repeats.
 */
export function readPathVariants(path: string): string[] {
  const nfd = path.normalize("NFD");
  const curly = (p: string) => p.replace(/'/g, "\u2019");
  const variants = [path.replace(/ (AM|PM)\./gi, "\u202f$1."), nfd, curly(path), curly(nfd)];
  return [...new Set(variants)].filter((v) => v !== path);
}
