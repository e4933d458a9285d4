/**
 * The channel's transport on Kubernetes: the sandbox Pod's attach stream (core/v1
 * `GET /api/v1/namespaces/{ns}/pods/{name}/attach?stdin=1&stdout=1&stderr=1`, a WebSocket in the
 * channel.k8s.io framing that @kubernetes/client-node's `Attach` speaks). warden-helper is the
 * container's process with stdin open, so its stdin carries the controller's frames and its
 * stdout the helper's; its stderr lines go to the log. The same protocol as over Docker's attach
 * (../channel/protocol), nothing Docker in it.
 */
import { PassThrough, Writable } from "node:stream";
import type { Attach } from "@kubernetes/client-node";
import { SandboxError } from "../../errors.js";
import type { ChannelTransport } from "../channel/protocol/client.js";
import { SANDBOX_CONTAINER } from "./pod-spec.js";

/** Where the helper's own stderr lines go. */
export type HelperLog = (message: string) => void;

/** The parts of a WebSocket the transport uses (the `ws` socket Attach resolves with). */
interface AttachSocket {
  close(): void;
  /** Stop and restart reading the connection (ws 8): the output share's backpressure. */
  pause?(): void;
  resume?(): void;
  on(event: "close", listener: (code: number, reason: Buffer) => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
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
 * Attaches to the sandbox container of Pod `podName` and returns the stream as a
 * ChannelTransport. Delivery starts at once: bytes the helper writes before `start` are kept in
 * order and handed over when it is called. Rejects SandboxError naming the Pod when the attach
 * is refused (Pod gone, not running, RBAC).
 */
export async function attachPod(
  attach: Attach,
  namespace: string,
  podName: string,
  options: { log?: HelperLog } = {},
): Promise<ChannelTransport> {
  const stdin = new PassThrough();
  const early: Buffer[] = [];
  let sinks: { onData(chunk: Buffer): void; onClose(reason: string): void } | undefined;
  let closedReason: string | undefined;
  let closed = false;
  const end = (reason: string) => {
    if (closed) return;
    closed = true;
    stdin.end();
    if (sinks) sinks.onClose(reason);
    else closedReason = reason;
  };
  let stderrTail = "";
  const stdout = sink((chunk) => (sinks ? sinks.onData(chunk) : early.push(chunk)));
  const stderr = sink((chunk) => {
    const lines = (stderrTail + chunk.toString("utf8")).split("\n");
    stderrTail = (lines.pop() ?? "").slice(-4096);
    for (const line of lines) if (line) options.log?.(line);
  });
  let socket: AttachSocket;
  try {
    socket = (await attach.attach(
      namespace,
      podName,
      SANDBOX_CONTAINER,
      stdout,
      stderr,
      stdin,
      false,
    )) as unknown as AttachSocket;
  } catch (err) {
    stdin.destroy();
    throw new SandboxError(
      `attaching to Pod ${namespace}/${podName} failed: ${(err as Error).message ?? String(err)}; check that the Pod runs and that the kubeconfig's user may create pods/attach.`,
      { cause: err },
    );
  }
  socket.on("close", (code) => end(`the Pod's attach stream closed (code ${code}; Pod stopped?)`));
  socket.on("error", (err) => end(`attach stream error: ${err.message}`));
  return {
    write(chunk) {
      if (!closed) stdin.write(chunk);
    },
    start(s) {
      sinks = s;
      for (const chunk of early.splice(0)) s.onData(chunk);
      if (closedReason !== undefined) s.onClose(closedReason);
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
