/**
 * `Sandbox.exec` over docker exec: a command in its own process group inside the container, output
 * streamed to the callbacks, exact exit status, and timeout/abort that kill the whole group (TERM,
 * then KILL after KILL_GRACE_MS) from a second exec, because killing the host-side client is not
 * enough (public fault 20). Checks and exit statuses: io-contract.ts, shared with the channel.
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { omitUndefined, onAbort } from "../../../util/index.js";
import { checkExec, EXIT_KILLED, execResult, KILL_GRACE_SECONDS } from "../../io-contract.js";
import { type ExecCommand, type ExecOptions, type ExecResult, WORKSPACE_DIR } from "../../types.js";
import { startDockerExec } from "./run.js";
import { killGroupCommand, wrapCommand } from "./wrapper.js";

/** After a kill, the stream is ended anyway if it is still open this long later (ms). */
const KILL_STREAM_DEADLINE_MS = 5000;

/**
 * Runs `command` (argv, or a `bash -c` script) under the process-group wrapper, itself run by the
 * argv prefix `seccomp` resolves with (seccomp-wrap.ts: warden-helper's `--seccomp-exec`, or none).
 * Resolves with the exit status; rejects InvalidArgumentError for a malformed command/env/timeout,
 * SandboxNotRunningError when the container is stopped, SandboxError on other engine failures and
 * when `seccomp` refuses (an rw sandbox without the helper's filter).
 */
export async function execInContainer(
  container: Docker.Container,
  command: ExecCommand,
  options: ExecOptions = {},
  seccomp: (signal?: AbortSignal) => Promise<string[]> = async () => [],
): Promise<ExecResult> {
  const { argv, env } = checkExec(command, options);
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  if (options.signal?.aborted) return execResult(0, "abort", elapsed());
  const prefix = await seccomp(options.signal);
  const execId = randomUUID();
  const running = await startDockerExec(
    container,
    // `env -i`: the command sees BASE_ENV plus the caller's env and nothing else (not even Docker's HOSTNAME).
    {
      cmd: [...prefix, ...wrapCommand(execId, ["env", "-i", ...env, ...argv])],
      cwd: options.cwd ?? WORKSPACE_DIR,
    },
    omitUndefined({ onStdout: options.onStdout, onStderr: options.onStderr }),
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
    // No code from the engine means the process did not finish normally: never report success.
    return execResult(code ?? EXIT_KILLED, stopReason, elapsed());
  } finally {
    if (timer) clearTimeout(timer);
    if (deadline) clearTimeout(deadline);
    removeAbort();
  }
}

/** Sends TERM then, KILL_GRACE_SECONDS later, KILL to the process group of exec `execId`, from a second exec. */
async function killGroup(container: Docker.Container, execId: string): Promise<void> {
  const killer = await startDockerExec(container, { cmd: killGroupCommand(execId, KILL_GRACE_SECONDS) }, {});
  await killer.done;
}
