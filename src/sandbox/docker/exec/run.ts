/**
 * One Docker exec, start to finish (Engine API 1.41 `POST /containers/{id}/exec`,
 * `POST /exec/{id}/start` hijacked, `GET /exec/{id}/json`): creates it, demuxes its output into
 * the sinks as it arrives, and resolves with the exit code once the stream ends.
 *
 * Backstop: Docker 20.10 can hold the stream open for a while after the process exited (while
 * something else keeps the pipes); when exec inspect says "not running" for `backstopMs` and the
 * stream is still open, the stream is ended here (not while the output's consumer holds the
 * stream paused: ReadHold; the unread output would be lost).
 */
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { fromDockerError, SandboxNotRunningError } from "../../../errors.js";
import { ReadHold } from "../../read-hold.js";
import type { OutputCallback } from "../../types.js";
import { StreamDemuxer } from "../demux.js";

/** What to run. `env` entries are `NAME=value`, added to the container's base environment. */
export interface DockerExecSpec {
  cmd: string[];
  env?: string[];
  cwd?: string;
}

/** A running exec: `done` resolves with the exit code (null if the engine gave none). */
export interface RunningExec {
  done: Promise<number | null>;
  /** Ends the output stream now (the process keeps running unless killed separately). */
  detach(): void;
}

const POLL_MS = 1000;
const BACKSTOP_MS = 2000;

/**
 * Starts `spec` in `container` as the sandbox user (the container's `User`: the exec names none), without stdin or TTY.
 * Rejects SandboxNotRunningError when the container is stopped or gone, SandboxError otherwise.
 */
export async function startDockerExec(
  container: Docker.Container,
  spec: DockerExecSpec,
  sinks: { onStdout?: OutputCallback; onStderr?: OutputCallback },
): Promise<RunningExec> {
  const what = `running ${spec.cmd[0] ?? "a command"} in the sandbox`;
  let exec: Docker.Exec;
  let stream: Duplex;
  try {
    exec = await container.exec({
      Cmd: spec.cmd,
      Env: spec.env ?? [],
      WorkingDir: spec.cwd,
      AttachStdin: false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  } catch (err) {
    throw await mapExecError(container, err, what);
  }
  // A promise from a callback (a full spill queue) pauses the stream until it settles.
  const hold = new ReadHold(
    () => stream.pause(),
    () => stream.resume(),
  );
  const demux = new StreamDemuxer({
    onStdout: (chunk) => hold.honour(sinks.onStdout?.(chunk)),
    onStderr: (chunk) => hold.honour(sinks.onStderr?.(chunk)),
  });
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => demux.push(chunk));
    stream.once("end", () => resolve());
    stream.once("close", () => resolve());
    stream.once("error", (err) => reject(err));
  });
  let notRunningSince: number | undefined;
  const poll = setInterval(() => {
    exec.inspect().then(
      (info) => {
        if (info.Running || hold.held) {
          notRunningSince = undefined;
          return;
        }
        notRunningSince ??= Date.now();
        if (Date.now() - notRunningSince >= BACKSTOP_MS) stream.destroy();
      },
      () => stream.destroy(),
    );
  }, POLL_MS);
  const done = (async () => {
    try {
      await ended;
    } catch (err) {
      throw await mapExecError(container, err, what);
    } finally {
      clearInterval(poll);
      hold.end();
    }
    try {
      const info = await exec.inspect();
      return info.ExitCode ?? null;
    } catch (err) {
      throw await mapExecError(container, err, what);
    }
  })();
  return { done, detach: () => stream.destroy() };
}

/** Maps an exec failure; a 404/409 on a stopped container becomes SandboxNotRunningError. */
async function mapExecError(container: Docker.Container, err: unknown, what: string): Promise<Error> {
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 404 || status === 409 || status === 500) {
    const running = await container.inspect().then(
      (i) => i.State.Running && !i.State.Paused,
      () => false,
    );
    if (!running) return new SandboxNotRunningError(container.id, { cause: err });
  }
  return fromDockerError(err, { what, containerId: container.id });
}
