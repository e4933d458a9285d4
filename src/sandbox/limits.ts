/**
 * Resource limits: defaults and validation. A limit that is not a positive finite number is an
 * InvalidArgumentError naming the field, before anything is created.
 */
import { InvalidArgumentError } from "../errors.js";
import type { SandboxLimits, WorkspaceMode } from "./types.js";

const MiB = 1024 * 1024;
/** Smallest CPU limit Docker takes (`docker run --cpus`); below it NanoCpus would round to 0 = unlimited. */
const MIN_CPUS = 0.01;

/** Defaults: 1 GiB memory (no swap), 1 CPU, 256 processes, 64 MiB /tmp, 1 GiB copy-mode workspace. */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 1024 * MiB,
  cpus: 1,
  pids: 256,
  tmpBytes: 64 * MiB,
  workspaceBytes: 1024 * MiB,
});

/**
 * Tasks (processes and threads alike count against pids.max) the sandbox's own processes keep:
 * the PID-1 parent and warden-helper run on a fixed set of threads created at start
 * (images/sandbox/helper/budget.go; measured: 29 tasks together, idle or after a batch of 64
 * calls), plus headroom for a docker exec (the kill script, the docker-exec path's wrapper).
 */
export const HELPER_PIDS_RESERVE = 40;

/**
 * Processes one tool call running at once is budgeted: `bash -c` and a two-command pipeline
 * (`yes | head` is 3). warden-helper costs no task per running command.
 */
export const PIDS_PER_CONCURRENT_CALL = 3;

/**
 * The smallest pids limit that runs `concurrentCalls` tool calls at once within their budget:
 * concurrentCalls × PIDS_PER_CONCURRENT_CALL + HELPER_PIDS_RESERVE (64 calls: 232).
 */
export function minPidsFor(concurrentCalls: number): number {
  return concurrentCalls * PIDS_PER_CONCURRENT_CALL + HELPER_PIDS_RESERVE;
}

/** For error messages: "running N calls at once takes M pids (3 processes per call plus 40 for warden-helper)". */
export function pidsBudgetText(concurrentCalls: number): string {
  return (
    `running ${concurrentCalls} call${concurrentCalls === 1 ? "" : "s"} at once takes ${minPidsFor(concurrentCalls)} pids ` +
    `(${PIDS_PER_CONCURRENT_CALL} processes per call plus ${HELPER_PIDS_RESERVE} for warden-helper)`
  );
}

/**
 * Merges `partial` over DEFAULT_LIMITS and validates every field.
 * Throws InvalidArgumentError (e.g. "limits.memoryBytes must be a positive number, got -1").
 * `pids` must be an integer; byte sizes are rounded down to whole bytes.
 */
export function resolveLimits(partial: Partial<SandboxLimits> | undefined): SandboxLimits {
  const merged: SandboxLimits = { ...DEFAULT_LIMITS, ...stripUndefined(partial ?? {}) };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof SandboxLimits)[]) {
    const value: unknown = merged[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new InvalidArgumentError({
        field: `limits.${key}`,
        problem: `must be a positive number, got ${String(value)}; omit it for the default ${DEFAULT_LIMITS[key]}.`,
      });
    }
  }
  if (!Number.isInteger(merged.pids)) {
    throw new InvalidArgumentError({
      field: "limits.pids",
      problem: `must be a whole number, got ${merged.pids}.`,
    });
  }
  // NanoCpus rounds a tiny value to 0, which Docker reads as "no limit" (red team): 0.01 is its minimum.
  if (merged.cpus < MIN_CPUS) {
    throw new InvalidArgumentError({
      field: "limits.cpus",
      problem: `must be at least ${MIN_CPUS} (Docker's minimum), got ${merged.cpus}.`,
    });
  }
  if (merged.memoryBytes < 6 * MiB) {
    throw new InvalidArgumentError({
      field: "limits.memoryBytes",
      problem: `must be at least 6 MiB (Docker's minimum), got ${merged.memoryBytes}.`,
    });
  }
  return {
    ...merged,
    memoryBytes: Math.floor(merged.memoryBytes),
    tmpBytes: Math.floor(merged.tmpBytes),
    workspaceBytes: Math.floor(merged.workspaceBytes),
  };
}

function stripUndefined(p: Partial<SandboxLimits>): Partial<SandboxLimits> {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as Partial<SandboxLimits>;
}

/**
 * The container's memory cgroup cap: tmpfs pages (/tmp, HOME, /run/warden and the copy-mode
 * workspace) are charged to the cgroup of the process that writes them, so without headroom a full
 * workspace would OOM-kill the sandbox instead of failing with ENOSPC (public fault 26). The cap is
 * therefore memoryBytes + 2 × tmpBytes (/tmp and HOME) + 1 MiB (+ workspaceBytes in copy mode);
 * processes may use all of it that the tmpfs areas do not hold (the whole cap while they are
 * empty). Swap is set equal, so nothing swaps.
 */
export function cgroupMemoryBytes(limits: SandboxLimits, mode: WorkspaceMode): number {
  return (
    limits.memoryBytes + 2 * limits.tmpBytes + 1024 * 1024 + (mode === "copy" ? limits.workspaceBytes : 0)
  );
}
