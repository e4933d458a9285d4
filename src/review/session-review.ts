/**
 * A copy-mode session's change, from start to saved patch, for every command that owns one
 * (`warden run`, `exec`, `replay`, `mcp`): the host workspace is snapshotted before the sandbox
 * copies it (startReview: hashes plus the session-start bytes, the patch's base), its identity is
 * recorded (workspace-record.ts), and at the end the sandbox's changes are read (finishReview),
 * split from what the review leaves out (excluded from the copy, git-ignored), rendered, and
 * saved with the base store beside the patch (saveSessionPatch), so `warden apply` can merge it later.
 * The patch holds only what `warden apply` applies (apply-rule.ts): a change it refuses (a link made
 * in the sandbox, a directory, an over-limit file, a `.git` path) is left out of it and listed, with
 * what else was left out, in `<patch>.left-out.json`, so `git apply` of the saved or exported patch
 * can never make a link (issue 37 item 6).
 */
import { writeFile } from "node:fs/promises";
import { excludeMatcher, type Sandbox, type SandboxOptions } from "../sandbox/index.js";
import { splitApplicable } from "./apply-rule.js";
import { collectChanges, type FileChange } from "./changes.js";
import { computeDiffstat, type Diffstat } from "./diffstat.js";
import { type HostBase, type HostSnapshot, snapshotHost } from "./host-snapshot.js";
import { gitIgnoreMatcher, splitIgnored } from "./ignored.js";
import { patchChanges } from "./patch.js";
import { saveBaseStore } from "./patch-file-apply.js";
import { type WorkspaceRecord, workspaceHeader, workspaceRecordOf } from "./workspace-record.js";

/** The session-start state of a copy-mode workspace (startReview). */
export interface ReviewStart {
  hostRoot: string;
  snapshot: HostSnapshot;
  base: HostBase;
  /** The directory's identity at session start. */
  workspace: WorkspaceRecord;
  /** What the copy left out (`--exclude`, `.wardenignore`, policy-denied reads), if anything. */
  excluded?: (relPath: string) => boolean;
}

/** The change of a copy-mode session, read before the session closed. */
export interface SessionReview {
  changes: FileChange[];
  stat: Diffstat;
  /**
   * The unified patch (git format) against the session-start state of the changes `warden apply`
   * applies (apply-rule.ts); "" when there are none.
   */
  patch: string;
  /** Changes in `changes` that `warden apply` refuses, with the reason: shown, left out of `patch`. */
  refused: Array<{ path: string; reason: string }>;
  /** Host hashes from before the copy. */
  snapshot: HostSnapshot;
  /** Changes left out of the patch and never applied: excluded from the copy, or git-ignored. */
  ignored: Array<{ path: string; reason: string }>;
  hostRoot: string;
  /** The workspace's identity at session start (what `warden apply` checks). */
  workspace: WorkspaceRecord;
}

/**
 * Snapshots a copy-mode workspace before its copy (a host edit racing the copy then shows up as a
 * conflict, never as lost work); undefined for another mode or no workspace. Rejects on host read
 * errors and when `signal` aborts.
 */
export async function startReview(
  workspace: SandboxOptions["workspace"],
  signal?: AbortSignal,
): Promise<ReviewStart | undefined> {
  if (!workspace || (workspace.mode ?? "copy") !== "copy") return undefined;
  const base: HostBase = new Map();
  const excluded = excludeMatcher(workspace.exclude, workspace.excludeIf);
  const record = await workspaceRecordOf(workspace.hostPath);
  const snapshot = await snapshotHost(workspace.hostPath, {
    ...(signal ? { signal } : {}),
    base,
    ...(excluded ? { skip: excluded } : {}),
  });
  return {
    hostRoot: workspace.hostPath,
    snapshot,
    base,
    workspace: record,
    ...(excluded ? { excluded } : {}),
  };
}

/**
 * Reads the session's change against `start`: changes to paths the copy left out are listed in
 * `ignored`, and so are git-ignored ones unless `includeIgnored`. Rejects on engine errors or abort.
 */
export async function finishReview(
  sandbox: Sandbox,
  start: ReviewStart,
  options: { signal?: AbortSignal; includeIgnored?: boolean } = {},
): Promise<SessionReview> {
  const { signal } = options;
  const gitIgnored = gitIgnoreMatcher(start.base);
  const { kept: changes, ignored } = splitIgnored(
    await collectChanges(sandbox, start.hostRoot, {
      ...(signal ? { signal } : {}),
      base: { snapshot: start.snapshot, bytes: start.base },
      oversize: "mark",
    }),
    (path) =>
      start.excluded?.(path)
        ? "excluded from the copy"
        : options.includeIgnored
          ? undefined
          : gitIgnored(path),
  );
  const patches = await patchChanges(changes, signal ? { signal } : {});
  const { refused } = splitApplicable(changes);
  const left = new Set(refused.map((r) => r.path));
  return {
    changes,
    stat: computeDiffstat(patches),
    patch: patches
      .filter((p) => !left.has(p.change.path))
      .map((p) => p.text)
      .join(""),
    refused,
    snapshot: start.snapshot,
    ignored,
    hostRoot: start.hostRoot,
    workspace: start.workspace,
  };
}

/** Everything the session changed that its patch does not carry, with the reason, in path order. */
export function leftOutOf(review: Pick<SessionReview, "refused" | "ignored">): Array<{
  path: string;
  reason: string;
}> {
  return [...review.refused, ...review.ignored].sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
  );
}

/** The sidecar of patch file `patchPath` listing what was left out of it (JSON: `[{path, reason}]`). */
export function leftOutPath(patchPath: string): string {
  return `${patchPath}.left-out.json`;
}

/**
 * Writes `review`'s patch to `path` (0600) with its workspace header first (workspace-record.ts),
 * the session-start version of each changed file into the base store beside it (`<path>.base/`),
 * and, when anything was left out of the patch (leftOutOf), its list to `<path>.left-out.json`
 * (leftOutPath). Rejects on fs errors.
 */
export async function saveSessionPatch(path: string, review: SessionReview): Promise<void> {
  await writeFile(path, `${workspaceHeader(review.workspace)}${review.patch}`, { mode: 0o600 });
  await saveBaseStore(path, review.changes);
  await saveLeftOut(path, review);
}

/** Writes leftOutOf(review) to leftOutPath(`patchPath`) (0600) when it is not empty. Rejects on fs errors. */
export async function saveLeftOut(
  patchPath: string,
  review: Pick<SessionReview, "refused" | "ignored">,
): Promise<void> {
  const left = leftOutOf(review);
  if (left.length > 0)
    await writeFile(leftOutPath(patchPath), `${JSON.stringify(left, null, 2)}\n`, { mode: 0o600 });
}
