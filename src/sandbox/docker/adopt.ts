/**
 * Taking over a running sandbox container after the controller restarted (`warden serve`'s
 * adoption): nothing a call of the dead controller started may keep running, and a container
 * whose main process is warden-helper gets its exec channel back.
 *
 * Helper containers (protocol version 2, images/sandbox/helper/reset.go): `warden-helper --reset`
 * through docker exec makes PID 1 SIGKILL every other process (the old helper child, its
 * commands, the asking process) and start a fresh child on the same attach pipes; the asking
 * process's death by SIGKILL (exit 137) is the signal that it happened. Only then does the
 * controller attach and ping (channel/connect.ts, the ping repeated every 250 ms: the engine may
 * attach a running container's output only after the first reply), so the new child never sees
 * half a frame of the dead controller. A helper of version 1 has no reset: such a container keeps
 * docker exec, and its running commands cannot be told apart from the helper, so they are left
 * (a known limit of containers made by an older image).
 *
 * docker-exec containers: every command runs under the wrapper (exec/wrapper.ts), which writes its
 * process group id to /run/warden/<exec>.pgid; each of those groups is SIGKILLed.
 */
import type Docker from "dockerode";
import { omitUndefined } from "../../util/index.js";
import type { ChannelClient } from "../channel/index.js";
import type { ExecPath } from "../exec-path.js";
import { connectChannel, rememberSocketDir, socketDirOf } from "./channel/index.js";
import { captureExec } from "./exec/index.js";
import { WARDEN_RUN_DIR } from "./hardening.js";

/** What adoption found: the channel (when re-attached) and the exec path the sandbox uses now. */
export interface AdoptedExec {
  channel?: ChannelClient;
  execPath: ExecPath;
  /** Why there is no channel (for the log), when the container runs the helper but it could not be used. */
  fallbackReason?: string;
}

/** The helper version that supports `--reset`. */
const RESET_VERSION = 2;

/** Exit status of a process killed by SIGKILL, as docker exec reports it. */
const KILLED_STATUS = 137;

/** SIGKILLs the process group of every wrapped command (see the file comment). */
const KILL_WRAPPED = [
  `for f in ${WARDEN_RUN_DIR}/*.pgid; do`,
  '  [ -s "$f" ] || continue; p=$(cat "$f"); kill -s KILL -- -$p 2>/dev/null',
  "done; exit 0",
].join("\n");

/**
 * Stops what ran in `container` (inspected as `inspect`) and re-attaches its channel when it runs
 * warden-helper. Never rejects for the channel: a helper that cannot be reset or does not answer
 * gives `{ execPath: "docker-exec", fallbackReason }`. Rejects with the engine's errors of the
 * exec calls themselves (container gone).
 */
export async function adoptExec(
  container: Docker.Container,
  inspect: Docker.ContainerInspectInfo,
  options: { log?: (message: string) => void } = {},
): Promise<AdoptedExec> {
  const helper = helperMainOf(inspect);
  if (!helper) {
    await captureExec(container, ["sh", "-c", KILL_WRAPPED]);
    return { execPath: "docker-exec" };
  }
  const version = await captureExec(container, [helper, "--version"]);
  const v = Number(version.stdout.toString("utf8").trim());
  if (version.exitCode !== 0 || !(v >= RESET_VERSION)) {
    return { execPath: "docker-exec", fallbackReason: `helper version ${v || "?"} cannot reset` };
  }
  const reset = await captureExec(container, [helper, "--reset"]);
  if (reset.exitCode !== KILLED_STATUS) {
    return {
      execPath: "docker-exec",
      fallbackReason: `helper reset failed (exit ${reset.exitCode}): ${reset.stderr.trim()}`,
    };
  }
  const socketDir = socketDirOf(inspect);
  if (socketDir) rememberSocketDir(container.id, socketDir);
  try {
    const channel = await connectChannel(container, {
      ...options,
      retryPingMs: 250,
      ...omitUndefined({ socketDir }),
    });
    return { channel, execPath: "channel" };
  } catch (err) {
    return { execPath: "docker-exec", fallbackReason: err instanceof Error ? err.message : String(err) };
  }
}

/** The helper's path when it is the container's main process (stdin open, no docker-init), else null. */
function helperMainOf(inspect: Docker.ContainerInspectInfo): string | null {
  const entry = inspect.Config.Entrypoint;
  const main = Array.isArray(entry) ? entry[0] : entry;
  if (!main || !inspect.Config.OpenStdin || inspect.HostConfig.Init) return null;
  return /(^|\/)warden-helper$/.test(main) ? main : null;
}
