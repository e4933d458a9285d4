/**
 * `Sandbox.exec` over the channel: one `exec` request per command, output streamed to the
 * callbacks frame by frame, the exit status from the helper. Same contract as the docker-exec
 * path (src/sandbox/types.ts ExecResult): 124 on timeout, 130 on abort, 128+N for signal N.
 * A timeout or abort asks the helper to TERM the command's process group, then KILL it after
 * `killGraceMs`; background children holding the pipes get `pipeGraceMs` after the main process
 * exits and are then killed with the group (Pi's bash tool waits 100 ms the same way).
 */
import { InvalidArgumentError } from "../../errors.js";
import { onAbort } from "../../util/index.js";
import { BASE_ENV } from "../hardening.js";
import type { ExecCommand, ExecOptions, ExecResult } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import type { ChannelClient } from "./client.js";
import { FrameType } from "./frame.js";
import { type ExecRequestBody, errorFromHelper, parseJson, toErrorBody, toExitBody } from "./protocol.js";

/** Tuning of channel exec; defaults match the docker-exec path. */
export interface ChannelExecTuning {
  /** Grace between TERM and KILL on timeout/abort, ms. Default 500 (the docker-exec path's). */
  killGraceMs?: number;
  /** Grace for children holding the pipes after the main process exits, ms. Default 100. */
  pipeGraceMs?: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The argv a command runs as: `argv` as given, or `bash -c <shell>`.
 * Throws InvalidArgumentError for an empty or non-string argv, or a non-string script.
 */
export function commandArgv(command: ExecCommand): string[] {
  if ("argv" in command) {
    const { argv } = command;
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== "string")) {
      throw new InvalidArgumentError("command.argv must be a non-empty array of strings.");
    }
    return argv;
  }
  if (typeof command.shell !== "string") {
    throw new InvalidArgumentError("command.shell must be a string (a bash script).");
  }
  return ["bash", "-c", command.shell];
}

/**
 * The command's whole environment: BASE_ENV (LANG, PATH, HOME) plus the caller's variables,
 * nothing else (not even Docker's HOSTNAME). Throws InvalidArgumentError for a bad name or value.
 */
export function commandEnv(env: Record<string, string> | undefined): string[] {
  const out = [...BASE_ENV];
  for (const [name, value] of Object.entries(env ?? {})) {
    if (!ENV_NAME.test(name) || typeof value !== "string" || value.includes("\0")) {
      throw new InvalidArgumentError(
        `env.${name} is not a valid environment variable (name [A-Za-z_][A-Za-z0-9_]*, string value without NUL).`,
      );
    }
    out.push(`${name}=${value}`);
  }
  return out;
}

/**
 * Runs `command` through the helper. Resolves with the ExecResult (also after a timeout or an
 * abort, with the partial output already delivered). Rejects SandboxNotRunningError when the channel drops mid-command, InvalidArgumentError for a
 * malformed command, env or timeout (thrown before anything runs). A missing `cwd` is status 126
 * with a message on stderr, as docker exec reports it.
 */
export async function channelExec(
  client: ChannelClient,
  command: ExecCommand,
  options: ExecOptions = {},
  tuning: ChannelExecTuning = {},
): Promise<ExecResult> {
  const started = performance.now();
  const killGraceMs = tuning.killGraceMs ?? 500;
  const cwd = options.cwd ?? WORKSPACE_DIR;
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new InvalidArgumentError(
      `timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}.`,
    );
  }
  const body: ExecRequestBody = {
    argv: commandArgv(command),
    cwd,
    env: commandEnv(options.env),
    pipeGraceMs: tuning.pipeGraceMs ?? 100,
  };
  if (options.signal?.aborted) {
    return Promise.resolve({ exitCode: 130, timedOut: false, aborted: true, durationMs: 0 });
  }
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
      const code = timedOut ? 124 : aborted ? 130 : exitCode;
      resolve({ exitCode: code, timedOut, aborted, durationMs: performance.now() - started });
    };
    const cleanup = () => {
      for (const t of timers) clearTimeout(t);
      unlisten();
      request.release();
    };
    const request = client.open(FrameType.exec, Buffer.from(JSON.stringify(body)), {
      onFrame: (frame) => {
        if (frame.type === FrameType.stdout) options.onStdout?.(frame.payload);
        else if (frame.type === FrameType.stderr) options.onStderr?.(frame.payload);
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
      request.send(FrameType.kill, Buffer.from(JSON.stringify({ graceMs: killGraceMs })));
      // Safety net: if the helper never reports the exit, resolve anyway a while after KILL.
      timers.push(setTimeout(() => finish(137), killGraceMs + 5000));
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
