/**
 * The channel's transport on Docker: the helper container's attached stdio (Docker Engine API
 * `POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1`, hijacked to a raw socket).
 * With Tty false the engine multiplexes stdout and stderr with 8-byte headers: stdout carries
 * only the helper's frames, stderr only its own diagnostics, which go to the log.
 */
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { fromDockerError } from "../../../errors.js";
import type { ChannelTransport } from "../../channel/protocol/client.js";
import { StreamDemuxer } from "../demux.js";

/** Where the helper's own stderr lines go. */
export type HelperLog = (message: string) => void;

/** Wraps an attached, hijacked socket as a ChannelTransport (demuxing the engine's frames). */
function attachedSocketTransport(socket: Duplex, log?: HelperLog): ChannelTransport {
  let closed = false;
  return {
    name: "attach",
    write(chunk) {
      if (!closed) socket.write(chunk);
    },
    start(sinks) {
      let stderrTail = "";
      const demux = new StreamDemuxer({
        onStdout: (chunk) => sinks.onData(chunk),
        onStderr: (chunk) => {
          const lines = (stderrTail + chunk.toString("utf8")).split("\n");
          stderrTail = (lines.pop() ?? "").slice(-4096);
          for (const line of lines) if (line) log?.(line);
        },
      });
      const end = (reason: string) => {
        if (closed) return;
        closed = true;
        socket.destroy();
        sinks.onClose(reason);
      };
      socket.on("data", (chunk: Buffer) => demux.push(chunk));
      socket.on("end", () => end("the helper's output ended (container stopped?)"));
      socket.on("close", () => end("the attach connection closed"));
      socket.on("error", (err: Error) => end(`attach connection error: ${err.message}`));
    },
    close() {
      if (!closed) socket.destroy();
    },
    pause() {
      socket.pause();
    },
    resume() {
      if (!closed) socket.resume();
    },
  };
}

/**
 * Attaches to `container`'s stdio (before or after start) and returns the hijacked socket as a
 * transport. Rejects with fromDockerError's mapping (NotFoundError, EngineUnreachableError, ...).
 */
export async function attachHelper(
  container: Docker.Container,
  options: { log?: HelperLog } = {},
): Promise<ChannelTransport> {
  try {
    const stream = await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true,
    });
    return attachedSocketTransport(stream as unknown as Duplex, options.log);
  } catch (err) {
    throw fromDockerError(err, {
      what: `attaching to the helper of container ${container.id.slice(0, 12)}`,
      containerId: container.id,
    });
  }
}
