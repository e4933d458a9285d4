/**
 * The host uid (and gid, the same number) a sandbox runs as. Neither Docker (no per-container
 * user namespace) nor this node's Kubernetes (containerd 1.6 / runc 1.1.5: no `hostUsers: false`)
 * maps a sandbox's uid to another on the host, so the kernel's per-user budgets (inotify instances,
 * epoll watches, POSIX mqueue bytes, pending signals) are shared by every process of one host uid.
 * Each sandbox therefore gets its own uid, drawn at random from [SANDBOX_UID_MIN, SANDBOX_UID_END),
 * far above normal host users; the gid is the same number.
 *
 * The one shared case is a `rw` workspace: a bind-mounted host directory the sandbox must be able
 * to write, which its owner prepared for RW_SANDBOX_UID (the image's `sandbox` user), so `rw`
 * sandboxes all run as 1000, sharing the budgets with each other and the host's uid 1000 (docs/security.md,
 * "Known limits").
 *
 * Collisions: within one process, `uidRegistry` never hands out a uid a live sandbox it knows of
 * (created, pooled or adopted) holds. Processes that do not know each other (several `warden serve`
 * replicas, the CLI beside a server) draw independently: with n sandboxes live on one host or node,
 * a new one shares a uid with one of them with probability n / 2,146,435,072 (about 1e-7 for n = 200).
 */
import { randomInt } from "node:crypto";
import { InvalidArgumentError } from "../errors.js";
import type { WorkspaceMode } from "./types.js";

/**
 * Lowest uid drawn for a sandbox: 2^20, above host accounts' uids (not every subordinate range:
 * Debian's SUB_UID_MAX is 600,100,000, so later accounts' subuid ranges overlap the draw).
 */
export const SANDBOX_UID_MIN = 2 ** 20;
/** One past the highest uid drawn: 2^31 (uids stay positive as signed 32-bit numbers). */
export const SANDBOX_UID_END = 2 ** 31;
/** The uid (and gid) of every `rw` sandbox: the image's `sandbox` user, which owns a prepared rw directory. */
export const RW_SANDBOX_UID = 1000;

/** Label (Docker) and annotation (Kubernetes) carrying the sandbox's uid (= gid). */
export const UID_LABEL = "io.warden.uid";

/**
 * A uid in [SANDBOX_UID_MIN, SANDBOX_UID_END) that is not in `taken`, drawn with `random(min, end)`
 * (default crypto.randomInt). Pure apart from the random source.
 */
export function drawSandboxUid(
  taken: ReadonlySet<number>,
  random: (min: number, end: number) => number = randomInt,
): number {
  for (;;) {
    const uid = random(SANDBOX_UID_MIN, SANDBOX_UID_END);
    if (!taken.has(uid)) return uid;
  }
}

/** Throws InvalidArgumentError unless `uid` is a positive integer: a sandbox never runs as root. */
export function requireNonRootUid(uid: number): number {
  if (!Number.isSafeInteger(uid) || uid <= 0)
    throw new InvalidArgumentError(`a sandbox's uid must be a positive integer (never root), got ${uid}.`);
  return uid;
}

/** The container's `User` field for `uid`: `uid:gid`, the gid being the same number. */
export function sandboxUser(uid: number): string {
  return `${uid}:${uid}`;
}

/**
 * The uid of a sandbox read back from its `User` field or uid label (`"123"` or `"123:123"`).
 * Throws InvalidArgumentError when it is missing, not a number, or 0 (root: never a sandbox's user).
 */
export function parseSandboxUid(value: string | undefined, where: string): number {
  const uid = /^\d+(:\d+)?$/.test(value ?? "") ? Number((value ?? "").split(":")[0]) : Number.NaN;
  if (!Number.isSafeInteger(uid) || uid <= 0) {
    throw new InvalidArgumentError(
      `${where} has no non-root sandbox uid (got ${JSON.stringify(value ?? null)}); remove it with \`warden gc\`.`,
    );
  }
  return uid;
}

/**
 * The uids this process's live sandboxes hold, keyed by their container id or Pod name, so a new
 * sandbox never draws one of them. `claim` before creating; `bind` once the id is known; `release`
 * when the sandbox is removed (or its creation failed).
 */
export class UidRegistry {
  private readonly held = new Set<number>();
  private readonly byOwner = new Map<string, number>();

  /** A fresh uid for a sandbox of workspace mode `mode` (RW_SANDBOX_UID for `rw`, never held). */
  claim(mode: WorkspaceMode): number {
    if (mode === "rw") return RW_SANDBOX_UID;
    const uid = drawSandboxUid(this.held);
    this.held.add(uid);
    return uid;
  }

  /** Records that container or Pod `owner` holds `uid` (also for one adopted after a restart). */
  bind(owner: string, uid: number): void {
    if (uid === RW_SANDBOX_UID) return;
    this.held.add(uid);
    this.byOwner.set(owner, uid);
  }

  /** Frees `uid` (a creation that failed before its owner existed). */
  release(uid: number): void {
    this.held.delete(uid);
  }

  /** Frees the uid of container or Pod `owner`, when it holds one. */
  releaseOwner(owner: string): void {
    const uid = this.byOwner.get(owner);
    if (uid === undefined) return;
    this.byOwner.delete(owner);
    this.held.delete(uid);
  }

  /** Whether `uid` is held by a live sandbox of this process. */
  has(uid: number): boolean {
    return this.held.has(uid);
  }
}

/** The registry of this process (both backends: uids are per host or node, ids never clash). */
export const uidRegistry = new UidRegistry();
