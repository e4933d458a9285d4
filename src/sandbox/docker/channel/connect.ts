/**
 * Opening the channel to a helper container: attach, optionally start, then a ping round trip.
 * When the helper does not answer, the error says why (container exited with its code, helper
 * missing, timeout), so the caller can fall back to docker exec and log that reason.
 */
import type Docker from "dockerode";
import { SandboxError } from "../../../errors.js";
import { omitUndefined } from "../../../util/index.js";
import { ChannelClient } from "../../channel/protocol/client.js";
import { awaitHelper, type HandshakeOptions } from "../../channel/protocol/handshake.js";
import { switchableTransport } from "../../channel/protocol/switchable.js";
import { attachHelper, type HelperLog } from "./attach.js";
import { moveToSocket, SWITCH_HELPER_VERSION, warnChannelOnAttach } from "./socket.js";

/** The helper did not come up; `reason` is for the fallback log line. */
export class HelperUnavailableError extends SandboxError {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`warden-helper is not available (${reason}); falling back to docker exec is possible.`, options);
  }
}

/**
 * Options of connectChannel: the handshake's (`timeoutMs`, default 5000; `retryPingMs`, for an
 * attach to a container that already runs: the engine may subscribe the new connection to the
 * container's output only after the helper answered, and that first reply is then lost), plus:
 */
export interface ConnectChannelOptions extends HandshakeOptions {
  /** Start the container after attaching (a created, not yet started container). Default false. */
  start?: boolean;
  log?: HelperLog;
  /**
   * The host directory mounted at CHANNEL_SOCKET_DIR (socket.ts): after the handshake the channel
   * moves onto a unix socket there, or stays on the attach stream when it cannot (logged).
   */
  socketDir?: string;
  /** Where the reason goes when the channel stays on the attach stream; default warnChannelOnAttach. */
  switchLog?: (message: string) => void;
}

/**
 * Attaches to `container`, starts it when asked, and waits for the helper's pong.
 * Resolves with a connected ChannelClient. Rejects HelperUnavailableError (naming the reason)
 * when the helper does not answer in time or the container stopped; AbortError on abort; a
 * mapped engine error when attach/start fail.
 */
export async function connectChannel(
  container: Docker.Container,
  options: ConnectChannelOptions = {},
): Promise<ChannelClient> {
  // No abort signal on the attach itself: the socket outlives this call (it is the channel), and a
  // creation signal that fires later must not cut it. Aborts are honoured around the ping below.
  const transport = switchableTransport(await attachHelper(container, omitUndefined({ log: options.log })));
  const client = new ChannelClient(transport, omitUndefined({ containerId: container.id, log: options.log }));
  try {
    if (options.start) await container.start();
    const pong = await awaitHelper(client, options);
    if (options.socketDir) {
      const log = options.switchLog ?? warnChannelOnAttach;
      const say = (m: string) => log(`sandbox ${container.id.slice(0, 12)}: ${m}`);
      if (Number(pong.version) >= SWITCH_HELPER_VERSION)
        await moveToSocket(client, transport, options.socketDir, say);
      else
        say(
          `channel stays on the attach stream: warden-helper ${pong.version} predates the socket (${SWITCH_HELPER_VERSION}); rebuild the image (npm run images)`,
        );
    }
    return client;
  } catch (err) {
    client.close();
    if (options.signal?.aborted) throw err;
    throw new HelperUnavailableError(await whyNotAnswering(container, err), { cause: err });
  }
}

async function whyNotAnswering(container: Docker.Container, err: unknown): Promise<string> {
  try {
    const state = (await container.inspect()).State;
    if (!state.Running)
      return `container exited with code ${state.ExitCode}${state.Error ? `: ${state.Error}` : ""}`;
  } catch {
    // fall through to the original error
  }
  if (err instanceof Error && err.name === "AbortError") return "no reply to ping in time";
  return err instanceof Error ? err.message : String(err);
}
