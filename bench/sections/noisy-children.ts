/**
 * The noisy-neighbour section's child processes (the server, noisy-server.ts, and tenant A's client,
 * noisy-tenant.ts): how they are started, asked over their IPC channel and let go, and the cleanup
 * when the server process died with the tenants' containers still there.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { getDocker } from "../../src/sandbox/docker/engine.js";
import type { ToServer } from "./noisy-server.js";
import type { ToTenant } from "./noisy-tenant.js";

/**
 * Forks `script` (beside this file) with its output on ours and an IPC channel; a channel error is
 * left to `ask`. The child has a session of its own (`detached`: setsid), so where the kernel groups
 * processes by session for the CPU (autogroup, sched(7)) it is a group of its own, as a server and
 * a client on their own machines are, not one share with B's client in this process.
 */
export function forkChild(script: string): ChildProcess {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    detached: true,
  });
  child.on("error", () => {}); // a send on a closed channel: the pending ask rejects on "exit"
  return child;
}

/** Closes the IPC channel of `child` if it is still open (the child exits when it closes). */
export function letGo(child: ChildProcess | undefined): void {
  if (child?.connected) child.disconnect();
}

/**
 * Sends `message` to a child process (tenant A's or the server's) and waits for its answer of type
 * `type`; rejects when the child exits first, or answers `failed` (its message).
 */
export async function ask<From extends { type: string }, T extends From["type"]>(
  child: ChildProcess,
  message: ToTenant | ToServer,
  type: T,
): Promise<Extract<From, { type: T }>> {
  const answer = new Promise<Extract<From, { type: T }>>((resolve, reject) => {
    const onMessage = (m: From) => {
      if (m.type !== type && m.type !== "failed") return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      if (m.type === "failed") reject(new Error((m as unknown as { message: string }).message));
      else resolve(m as Extract<From, { type: T }>);
    };
    const onExit = (code: number | null) => reject(new Error(`a child process exited (${code})`));
    if (!child.connected) return reject(new Error(`a child process exited (${child.exitCode})`));
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
  if (child.connected) child.send(message);
  return answer;
}

/** Removes the containers of these tenants (io.warden.tenant label): when the server process died. */
export async function removeTenantContainers(tenants: string[]): Promise<void> {
  const docker = getDocker();
  for (const tenant of tenants)
    for (const c of await docker.listContainers({
      all: true,
      filters: { label: [`io.warden.tenant=${tenant}`] },
    }))
      await docker.getContainer(c.Id).remove({ force: true, v: true });
}
