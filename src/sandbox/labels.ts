/**
 * Container and volume labels: how `warden gc` finds what a session (or a crashed controller)
 * left behind. Borrowed from testcontainers-node's labelled-resource sweeping.
 */
import { hostname } from "node:os";

/** Label keys set on every warden container and volume. */
export const LABEL = {
  session: "io.warden.session",
  tenant: "io.warden.tenant",
  /** ISO-8601 creation time. */
  created: "io.warden.created",
  /** ISO-8601 time after which `warden gc` may remove the resource. */
  expires: "io.warden.expires",
  /** `hostname:pid` of the controller process that created it. */
  controller: "io.warden.controller",
  /** Name of the copy-mode workspace volume (on the container). */
  volume: "io.warden.volume",
} as const;

/** The labels of one sandbox, as written to Docker. */
export function sandboxLabels(input: {
  sessionId: string;
  tenant: string;
  createdAt: Date;
  expiresAt: Date;
  /** Owner id; default `hostname:pid` of this process. */
  controller?: string;
}): Record<string, string> {
  return {
    [LABEL.session]: input.sessionId,
    [LABEL.tenant]: input.tenant,
    [LABEL.created]: input.createdAt.toISOString(),
    [LABEL.expires]: input.expiresAt.toISOString(),
    [LABEL.controller]: input.controller ?? controllerId(),
  };
}

/** `hostname:pid` of this process. */
export function controllerId(): string {
  return `${hostname()}:${process.pid}`;
}

/**
 * Why a labelled resource may be removed, or null when it is live:
 * "expired" (expires label in the past) or "orphaned" (its controller ran on this host and that
 * process no longer exists). Resources of other hosts' live controllers are never judged orphaned.
 */
export function staleReason(
  labels: Record<string, string> | undefined,
  now: Date,
): "expired" | "orphaned" | null {
  if (!labels) return null;
  const expires = Date.parse(labels[LABEL.expires] ?? "");
  if (Number.isFinite(expires) && expires <= now.getTime()) return "expired";
  return controllerProcessAlive(labels[LABEL.controller] ?? "") === false ? "orphaned" : null;
}

/**
 * Whether the controller named by an io.warden.controller label is alive: true or false for a
 * `hostname:pid` of this host; null when that cannot be told here (another host, or a stable
 * owner id without a pid such as `warden serve`'s), which callers must treat as "not orphaned".
 */
export function controllerProcessAlive(controller: string): boolean | null {
  const match = /^(.+):(\d+)$/.exec(controller);
  if (!match || match[1] !== hostname()) return null;
  const pid = Number(match[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
