/**
 * A copy-mode session's change, from start to saved patch, for every command that owns one
 * (`warden run`, `exec`, `replay`, `mcp`): the host workspace is snapshotted before the sandbox
 * copies it (startReview: hashes plus the session-start bytes, the patch's base), its identity is
 * recorded (workspace-record.ts), and at the end the sandbox's changes are read (finishReview),
 * split from what the review leaves out (excluded from the copy, git-ignored), rendered, and
 * saved with the base store beside the patch (saveSessionPatch), so `warden apply` can merge it later.
 */
import { writeFile } from "node:fs/promises";
import { excludeMatcher, type Sandbox, type SandboxOptions } from "../sandbox/index.js";
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
  /** The unified patch (git format) against the session-start state, "" when nothing changed. */
  patch: string;
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
  return {
    changes,
    stat: computeDiffstat(patches),
    patch: patches.map((p) => p.text).join(""),
    snapshot: start.snapshot,
    ignored,
    hostRoot: start.hostRoot,
    workspace: start.workspace,
  };
}

/**
 * Writes `review`'s patch to `path` (0600) with its workspace header first (workspace-record.ts),
 * and the session-start version of each changed file into the base store beside it
 * (`<path>.base/`). Rejects on fs errors.
 */
export async function saveSessionPatch(path: string, review: SessionReview): Promise<void> {
  await writeFile(path, `${workspaceHeader(review.workspace)}${review.patch}`, { mode: 0o600 });
  await saveBaseStore(path, review.changes);
}
