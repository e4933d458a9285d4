/**
 * The channel's transport on Kubernetes: a pods/exec stream (core/v1
 * `GET /api/v1/namespaces/{ns}/pods/{name}/exec?command=warden-helper&command=--channel&stdin=1&stdout=1&stderr=1`,
 * a WebSocket in the channel.k8s.io framing that @kubernetes/client-node's `Exec` speaks) running
 * `warden-helper --channel` in the sandbox container: its stdin carries the controller's frames, its
 * stdout the helper's, its stderr lines go to the log. Not the Pod's attach stream: the CRI runtime
 * writes every byte a container's own stdout and stderr carry to the node's disk (the kubelet's
 * pod log directory, /var/log/pods/<namespace>_<pod>_<uid>/<container>/N.log, which `kubectl logs`
 * reads), and a Pod spec cannot turn that off; an exec stream's output is not logged. The same
 * protocol as over Docker's attach (../channel/protocol), nothing Docker in it.
 */
import { constants } from "node:os";
import { PassThrough, Writable } from "node:stream";
import type { Exec, V1Status } from "@kubernetes/client-node";
import { SandboxError } from "../../errors.js";
import type { ChannelTransport } from "../channel/protocol/client.js";
import { HELPER_PATH, SEALED_HELPER_PATH } from "../channel/protocol/helper-path.js";
import { SANDBOX_CONTAINER } from "./pod-spec.js";

/**
 * The helper's exec-channel mode (images/sandbox/helper/channel.go, helper version 3): it serves
 * the channel on the exec stream, replaces a channel already running in the container (it kills
 * every other process but PID 1 first), and kills what it started when the stream ends; from
 * version 4 it caps the size of every file its commands write (fsize.go) and refuses to serve
 * when /workspace or /tmp is not a size-limited tmpfs; from version 5 its seccomp filter also
 * refuses the preallocation ioctls (seccomp.go), and the image has the execute-only copy.
 */
export const CHANNEL_COMMAND = [HELPER_PATH, "--channel"];

/**
 * The same from the execute-only copy (SEALED_HELPER_PATH): non-dumpable from its execve, so no
 * command of the sandbox can ptrace the new channel (or write its memory) before the helper's own
 * prctl(PR_SET_DUMPABLE, 0) runs. A re-opened channel was seized so, and then ran calls outside the
 * file-size cap and the fallocate filter.
 */
export const SEALED_CHANNEL_COMMAND = [SEALED_HELPER_PATH, "--channel"];

/** Where the helper's own stderr lines go. */
export type HelperLog = (message: string) => void;

/** The parts of a WebSocket the transport uses (the `ws` socket Exec resolves with). */
interface ExecSocket {
  close(): void;
  /** Stop and restart reading the connection (ws 8): the output share's backpressure. */
  pause?(): void;
  resume?(): void;
  on(event: "close", listener: (code: number, reason: Buffer) => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/**
 * The exit status a pods/exec Status reports: 0 for Success, the `ExitCode` cause for a non-zero
 * exit, -1 when it names none (the exec itself failed).
 */
export function exitCodeOf(status: V1Status): number {
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : -1;
}

/**
 * Why the channel's helper in Pod `namespace/podName` ended, from the API's final `status` (pure):
 * its message, and for an exit code above 128 the signal that killed it (Linux numbering, e.g.
 * 137: signal 9, SIGKILL: `kill -9 -1` in the sandbox, or a newer channel's helper).
 */
export function helperEndedReason(namespace: string, podName: string, status: V1Status): string {
  const code = exitCodeOf(status);
  const signal = code - 128;
  const name = Object.entries(constants.signals).find(([, n]) => n === signal)?.[0];
  const killed = code > 128 && name ? `; killed by signal ${signal}, ${name}` : "";
  return `the channel's helper in Pod ${namespace}/${podName} ended (${status.message ?? status.status}${killed})`;
}

/** A Writable that hands each chunk to `onChunk` at once (no buffering of its own). */
function sink(onChunk: (chunk: Buffer) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      onChunk(chunk);
      done();
    },
  });
}

/**
 * Starts `warden-helper --channel` in the sandbox container of Pod `podName` through the exec API
 * and returns its stream as a ChannelTransport. Delivery starts at once: bytes the helper writes
 * before `start` are kept in order and handed over when it is called. Rejects SandboxError naming
 * the Pod when the exec is refused (Pod gone, not running, RBAC).
 */
export async function execChannel(
  exec: Exec,
  namespace: string,
  podName: string,
  options: { log?: HelperLog; command?: string[] } = {},
): Promise<ChannelTransport> {
  const stdin = new PassThrough();
  const early: Buffer[] = [];
  let sinks: { onData(chunk: Buffer): void; onClose(reason: string, lost?: boolean): void } | undefined;
  let closedReason: string | undefined;
  let closedLost = false;
  let closed = false;
  // `lost`: the connection ended without the helper's exit status (cut, idle timeout, API server gone).
  const end = (reason: string, lost = false) => {
    if (closed) return;
    closed = true;
    stdin.end();
    if (sinks) sinks.onClose(reason, lost);
    else {
      closedReason = reason;
      closedLost = lost;
    }
  };
  let stderrTail = "";
  const stdout = sink((chunk) => (sinks ? sinks.onData(chunk) : early.push(chunk)));
  const stderr = sink((chunk) => {
    const lines = (stderrTail + chunk.toString("utf8")).split("\n");
    stderrTail = (lines.pop() ?? "").slice(-4096);
    for (const line of lines) if (line) options.log?.(line);
  });
  // The helper's exit: the API's final Status (its message says why, e.g. killed by a newer channel).
  let exitStatus: V1Status | undefined;
  let socket: ExecSocket;
  try {
    socket = (await exec.exec(
      namespace,
      podName,
      SANDBOX_CONTAINER,
      options.command ?? CHANNEL_COMMAND,
      stdout,
      stderr,
      stdin,
      false,
      (status) => {
        exitStatus = status;
      },
    )) as unknown as ExecSocket;
  } catch (err) {
    stdin.destroy();
    throw channelStartError(namespace, podName, err);
  }
  socket.on("close", (code) => {
    if (exitStatus) end(helperEndedReason(namespace, podName, exitStatus));
    else {
      const why = code === 1006 ? ": the connection was lost" : "";
      end(
        `the Pod's exec stream closed without the helper's exit status (WebSocket code ${code}${why})`,
        true,
      );
    }
  });
  socket.on("error", (err) => end(`exec stream error: ${err.message}`, true));
  return {
    name: "exec-stream",
    write(chunk) {
      if (!closed) stdin.write(chunk);
    },
    start(s) {
      sinks = s;
      for (const chunk of early.splice(0)) s.onData(chunk);
      if (closedReason !== undefined) s.onClose(closedReason, closedLost);
    },
    close() {
      if (closed) return;
      socket.close();
      end("the channel was closed");
    },
    ...(socket.pause && socket.resume
      ? { pause: () => socket.pause?.(), resume: () => socket.resume?.() }
      : {}),
  };
}

/**
 * The error of a channel that could not start because the API refused or failed the exec (its
 * `err`): names Pod `namespace`/`podName` and the rights to check.
 */
export function channelStartError(namespace: string, podName: string, err: unknown): SandboxError {
  return new SandboxError(
    `starting the channel in Pod ${namespace}/${podName} failed: ${(err as Error).message ?? String(err)}; check that the Pod runs and that the kubeconfig's user may create pods/exec.`,
    { cause: err },
  );
}
