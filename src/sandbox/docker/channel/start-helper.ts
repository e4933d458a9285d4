/**
 * Choosing and starting the exec path of a new sandbox container. `planHelper` decides before
 * create: the helper shipped in the image (its `io.warden.helper` label), a copy of it for other
 * images, or none (docker exec: asked for, or the binary is unavailable). `startWithHelper`
 * starts the container and connects; when the helper does not answer it reports why, so the
 * caller logs the reason (warnHelperFallback) and uses docker exec, recreating the container
 * without the helper when it is not running.
 */
import type Docker from "dockerode";
import type { ChannelClient } from "../../channel/protocol/client.js";
import type { ExecPath } from "../../exec-path.js";
import { connectChannel, HelperUnavailableError } from "./connect.js";
import { withHelperMain } from "./container.js";
import { helperArchive, helperPathInImage, installHelper, withForeignHelper } from "./helper-binary.js";
import { warnChannelOnAttach } from "./socket.js";
import { disableChannelSocket, isMissingBindSource, removeSocketDir, withSocketDir } from "./socket-dir.js";

/** How the helper gets into a container. */
export type HelperPlan =
  | { kind: "in-image"; path: string }
  | { kind: "copy"; archive: Buffer }
  | { kind: "none"; reason: string };

/**
 * Decides the helper plan for `image` under OCI runtime `runtime` (runc: the image's
 * execute-only copy when it has one, helperPathInImage). Never rejects: problems become
 * `{ kind: "none", reason }`.
 */
export async function planHelper(
  docker: Docker,
  image: string,
  path: ExecPath = "channel",
  runtime: "runc" | "runsc" = "runc",
): Promise<HelperPlan> {
  if (path === "docker-exec") return { kind: "none", reason: "docker exec was asked for" };
  try {
    const inImage = await helperPathInImage(docker, image, { sealed: runtime === "runc" });
    if (inImage) return { kind: "in-image", path: inImage };
    return { kind: "copy", archive: await helperArchive(docker) };
  } catch (err) {
    return { kind: "none", reason: err instanceof Error ? err.message : String(err) };
  }
}

/** The create body for `plan`: unchanged for "none", the helper as main process otherwise. */
export function applyHelperPlan(
  config: Docker.ContainerCreateOptions,
  plan: HelperPlan,
): Docker.ContainerCreateOptions {
  if (plan.kind === "in-image") return withHelperMain(config, plan.path);
  if (plan.kind === "copy") return withForeignHelper(config);
  return config;
}

/** Outcome of startWithHelper: a channel, or the reason there is none and whether the container runs. */
export type HelperStart = { client: ChannelClient } | { reason: string; running: boolean };

/**
 * Creates the container of `config` (a body made with applyHelperPlan), with `socketDir` mounted
 * at CHANNEL_SOCKET_DIR when given. An engine that cannot see the directory (a controller in a
 * container whose WARDEN_CHANNEL_DIR is not bind-mounted at the same path on the engine's host)
 * turns the socket off for the process (logged once): the directory is removed and the container
 * made without it. Resolves with the container and the directory it mounts, if any; rejects with
 * the engine's error otherwise.
 */
export async function createHelperContainer(
  docker: Docker,
  config: Docker.ContainerCreateOptions,
  socketDir: string | undefined,
  log: (message: string) => void = warnChannelOnAttach,
): Promise<{ container: Docker.Container; socketDir?: string }> {
  if (!socketDir) return { container: await docker.createContainer(config) };
  try {
    return { container: await docker.createContainer(withSocketDir(config, socketDir)), socketDir };
  } catch (err) {
    if (!isMissingBindSource(err, socketDir)) throw err;
    disableChannelSocket(
      `the engine does not see ${socketDir}; bind-mount WARDEN_CHANNEL_DIR at the same path on the engine's host, or set it to none`,
      log,
    );
    await removeSocketDir(socketDir);
    return { container: await docker.createContainer(config) };
  }
}

/**
 * Starts a created container made with applyHelperPlan(plan) and connects to its helper. For
 * "none" it only starts the container. Rejects only for engine errors of the start itself (or an
 * abort); a helper that does not answer is `{ reason, running }`.
 */
export async function startWithHelper(
  container: Docker.Container,
  plan: HelperPlan,
  options: {
    signal?: AbortSignal;
    timeoutMs?: number;
    log?: (message: string) => void;
    socketDir?: string;
    switchLog?: (message: string) => void;
  } = {},
): Promise<HelperStart> {
  if (plan.kind === "none") {
    await container.start();
    return { reason: plan.reason, running: true };
  }
  if (plan.kind === "copy") await installHelper(container, plan.archive);
  try {
    return { client: await connectChannel(container, { start: true, ...options }) };
  } catch (err) {
    if (!(err instanceof HelperUnavailableError)) throw err;
    const running = await container.inspect().then(
      (i) => i.State.Running,
      () => false,
    );
    return { reason: err.reason, running };
  }
}

/** Logs why a sandbox uses docker exec instead of the channel (a process warning, code WARDEN_HELPER_FALLBACK). */
export function warnHelperFallback(containerId: string, reason: string): void {
  process.emitWarning(
    `sandbox ${containerId.slice(0, 12)}: warden-helper unavailable (${reason}); using docker exec.`,
    {
      code: "WARDEN_HELPER_FALLBACK",
    },
  );
}
