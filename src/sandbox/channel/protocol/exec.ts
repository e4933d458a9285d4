/**
 * `Sandbox.exec` over the channel: one `exec` request per command, output streamed to the
 * callbacks frame by frame, the exit status from the helper. Same contract as the docker-exec
 * path (../../io-contract.ts: the same checks, 124 on timeout, 130 on abort, 128+N for signal N).
 * A timeout or abort asks the helper to TERM the command's process group, then KILL it after
 * `killGraceMs`; background children holding the pipes get `pipeGraceMs` after the main process
 * exits and are then killed with the group (Pi's bash tool waits 100 ms the same way).
 */
import { onAbort } from "../../../util/index.js";
import { checkExec, EXIT_KILLED, execResult, KILL_GRACE_MS, PIPE_GRACE_MS } from "../../io-contract.js";
import type { ExecCommand, ExecOptions, ExecResult } from "../../types.js";
import { WORKSPACE_DIR } from "../../types.js";
import type { ChannelClient } from "./client.js";
import { FrameType } from "./frame.js";
import {
  type ExecRequestBody,
  errorFromHelper,
  type KillRequestBody,
  parseJson,
  toErrorBody,
  toExitBody,
} from "./messages.js";

/** Tuning of channel exec; defaults are the shared ones (io-contract.ts). */
export interface ChannelExecTuning {
  /** Grace between TERM and KILL on timeout/abort, ms. Default KILL_GRACE_MS (500). */
  killGraceMs?: number;
  /** Grace for children holding the pipes after the main process exits, ms. Default PIPE_GRACE_MS (100). */
  pipeGraceMs?: number;
}

/** After the kill frame, the call resolves anyway (EXIT_KILLED) if no exit came this long after KILL (ms). */
const EXIT_DEADLINE_AFTER_KILL_MS = 5000;

/**
 * Runs `command` through the helper. Resolves with the ExecResult (also after a timeout or an
 * abort, with the partial output already delivered). Rejects SandboxNotRunningError when the
 * channel drops mid-command, InvalidArgumentError for a malformed command, env or timeout (thrown
 * before anything runs). A missing `cwd` is status 126 with a message on stderr, as docker exec
 * reports it.
 */
export async function channelExec(
  client: ChannelClient,
  command: ExecCommand,
  options: ExecOptions = {},
  tuning: ChannelExecTuning = {},
): Promise<ExecResult> {
  const { argv, env } = checkExec(command, options);
  const started = performance.now();
  const killGraceMs = tuning.killGraceMs ?? KILL_GRACE_MS;
  const cwd = options.cwd ?? WORKSPACE_DIR;
  const body: ExecRequestBody = { argv, cwd, env, pipeGraceMs: tuning.pipeGraceMs ?? PIPE_GRACE_MS };
  if (options.signal?.aborted) return execResult(0, "abort", performance.now() - started);
  return new Promise<ExecResult>((resolve, reject) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let unlisten = () => {};
    const finish = (exitCode: number) => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(
        execResult(
          exitCode,
          timedOut ? "timeout" : aborted ? "abort" : undefined,
          performance.now() - started,
        ),
      );
    };
    const cleanup = () => {
      for (const t of timers) clearTimeout(t);
      unlisten();
      request.release();
    };
    const request = client.open(FrameType.exec, Buffer.from(JSON.stringify(body)), {
      onFrame: (frame) => {
        // A promise from a callback (a full spill queue) pauses the channel's reading until it settles.
        if (frame.type === FrameType.stdout) request.hold.honour(options.onStdout?.(frame.payload));
        else if (frame.type === FrameType.stderr) request.hold.honour(options.onStderr?.(frame.payload));
        else if (frame.type === FrameType.exit) {
          finish(toExitBody(parseJson(frame.payload, "exit")).code);
          return true;
        } else if (frame.type === FrameType.error) {
          settled = true;
          cleanup();
          reject(
            errorFromHelper(toErrorBody(parseJson(frame.payload, "error")), "running a command in", cwd),
          );
          return true;
        }
        return false;
      },
      onClose: (err) => {
        if (settled) return;
        settled = true;
        cleanup();
        reject(err);
      },
    });
    const stop = () => {
      const kill: KillRequestBody = { graceMs: killGraceMs };
      request.send(FrameType.kill, Buffer.from(JSON.stringify(kill)));
      // Safety net: if the helper never reports the exit, resolve anyway a while after KILL.
      timers.push(setTimeout(() => finish(EXIT_KILLED), killGraceMs + EXIT_DEADLINE_AFTER_KILL_MS));
    };
    if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
      timers.push(
        setTimeout(() => {
          if (settled || aborted) return;
          timedOut = true;
          stop();
        }, options.timeoutMs),
      );
    }
    unlisten = onAbort(options.signal, () => {
      if (settled || timedOut) return;
      aborted = true;
      stop();
    });
  });
}
