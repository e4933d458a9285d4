/**
 * `Sandbox.exec`: a command in its own process group inside the container, output streamed to
 * the callbacks, exact exit status, and timeout/abort that kill the whole group (TERM, then KILL
 * after a short grace) from a second exec, because killing the host-side client is not enough
 * (public fault 20). Conventions: 124 on timeout (GNU timeout), 130 on abort (128+SIGINT).
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { InvalidArgumentError } from "../errors.js";
import { onAbort } from "../util/index.js";
import { startDockerExec } from "./docker-exec.js";
import { killGroupCommand, wrapCommand } from "./exec-wrapper.js";
import { BASE_ENV } from "./hardening.js";
import { type ExecCommand, type ExecOptions, type ExecResult, WORKSPACE_DIR } from "./types.js";

/** Seconds between TERM and KILL when a timeout or abort stops a command. */
export const KILL_GRACE_SECONDS = 0.5;
/** After a kill, the stream is ended anyway if it is still open this long later (ms). */
const KILL_STREAM_DEADLINE_MS = 5000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Exit status reported when the timeout fired. */
export const EXIT_TIMEOUT = 124;
/** Exit status reported when the signal aborted the command. */
export const EXIT_ABORTED = 130;

/**
 * Runs `command` (argv, or a `bash -c` script) under the process-group wrapper.
 * Resolves with the exit status; rejects InvalidArgumentError for a malformed command/env/timeout,
 * SandboxNotRunningError when the container is stopped, SandboxError on other engine failures.
 */
export async function execInContainer(
  container: Docker.Container,
  command: ExecCommand,
  options: ExecOptions = {},
): Promise<ExecResult> {
  const argv = commandArgv(command);
  const env = envList(options.env);
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new InvalidArgumentError(
      `timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}.`,
    );
  }
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (options.signal?.aborted) {
    return { exitCode: EXIT_ABORTED, timedOut: false, aborted: true, durationMs: elapsed() };
  }
  const execId = randomUUID();
  const running = await startDockerExec(
    container,
    // `env -i`: the command sees BASE_ENV plus the caller's env and nothing else (not even Docker's HOSTNAME).
    {
      cmd: wrapCommand(execId, ["env", "-i", ...BASE_ENV, ...env, ...argv]),
      cwd: options.cwd ?? WORKSPACE_DIR,
    },
    { onStdout: options.onStdout, onStderr: options.onStderr },
  );
  let stopReason: "timeout" | "abort" | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let killed: Promise<void> | undefined;
  const stop = (reason: "timeout" | "abort") => {
    if (stopReason) return;
    stopReason = reason;
    killed = killGroup(container, execId).catch(() => {});
    deadline = setTimeout(() => running.detach(), KILL_STREAM_DEADLINE_MS);
  };
  const timer =
    options.timeoutMs === undefined ? undefined : setTimeout(() => stop("timeout"), options.timeoutMs);
  const removeAbort = onAbort(options.signal, () => stop("abort"));
  try {
    const code = await running.done;
    // The killer exec is done too before the call returns, so nothing warden started is left running.
    if (killed) await Promise.race([killed, sleep(KILL_STREAM_DEADLINE_MS, undefined, { ref: false })]);
    if (stopReason === "timeout")
      return { exitCode: EXIT_TIMEOUT, timedOut: true, aborted: false, durationMs: elapsed() };
    if (stopReason === "abort")
      return { exitCode: EXIT_ABORTED, timedOut: false, aborted: true, durationMs: elapsed() };
    // No code from the engine means the process did not finish normally: never report success.
    return { exitCode: code ?? 137, timedOut: false, aborted: false, durationMs: elapsed() };
  } finally {
    if (timer) clearTimeout(timer);
    if (deadline) clearTimeout(deadline);
    removeAbort();
  }
}

/** Sends TERM then KILL to the process group of exec `execId`, from a second exec. */
async function killGroup(container: Docker.Container, execId: string): Promise<void> {
  const killer = await startDockerExec(container, { cmd: killGroupCommand(execId, KILL_GRACE_SECONDS) }, {});
  await killer.done;
}

function commandArgv(command: ExecCommand): string[] {
  if ("argv" in command) {
    if (
      !Array.isArray(command.argv) ||
      command.argv.length === 0 ||
      command.argv.some((a) => typeof a !== "string")
    ) {
      throw new InvalidArgumentError("command.argv must be a non-empty array of strings.");
    }
    return command.argv;
  }
  if (typeof command.shell !== "string") {
    throw new InvalidArgumentError("command.shell must be a string (a bash script).");
  }
  return ["bash", "-c", command.shell];
}

function envList(env: Record<string, string> | undefined): string[] {
  if (!env) return [];
  return Object.entries(env).map(([name, value]) => {
    if (!ENV_NAME.test(name) || typeof value !== "string" || value.includes("\0")) {
      throw new InvalidArgumentError(
        `env.${name} is not a valid environment variable (name [A-Za-z_][A-Za-z0-9_]*, string value without NUL).`,
      );
    }
    return `${name}=${value}`;
  });
}
