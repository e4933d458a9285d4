/**
 * Opening the channel to a helper container: attach, optionally start, then a ping round trip.
 * When the helper does not answer, the error says why (container exited with its code, helper
 * missing, timeout), so the caller can fall back to docker exec and log that reason.
 */
import type Docker from "dockerode";
import { SandboxError } from "../../errors.js";
import { onAbort } from "../../util/index.js";
import { attachHelper, type HelperLog } from "./attach.js";
import { ChannelClient } from "./client.js";

/** The helper did not come up; `reason` is for the fallback log line. */
export class HelperUnavailableError extends SandboxError {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`warden-helper is not available (${reason}); falling back to docker exec is possible.`, options);
  }
}

/** Options of connectChannel. */
export interface ConnectChannelOptions {
  /** Start the container after attaching (a created, not yet started container). Default false. */
  start?: boolean;
  /** How long to wait for the helper's first reply, in ms. Default 5000. */
  timeoutMs?: number;
  /**
   * Re-send the ping every this many ms until a reply or `timeoutMs` (default: one ping). For an
   * attach to a container that already runs: the engine may subscribe the new connection to the
   * container's output only after the helper answered, and that first reply is then lost (a late
   * reply to an abandoned ping is dropped by the client).
   */
  retryPingMs?: number;
  signal?: AbortSignal;
  log?: HelperLog;
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
  const transport = await attachHelper(container, { log: options.log });
  const client = new ChannelClient(transport, { containerId: container.id, log: options.log });
  try {
    if (options.start) await container.start();
    const timeoutMs = options.timeoutMs ?? 5000;
    const giveUp = new AbortController();
    const timer = setTimeout(() => giveUp.abort(), timeoutMs);
    const unlisten = onAbort(options.signal, () => giveUp.abort());
    try {
      if (options.retryPingMs) await pingUntilAnswered(client, giveUp.signal, options.retryPingMs);
      else await client.ping(giveUp.signal);
    } finally {
      clearTimeout(timer);
      unlisten();
    }
    return client;
  } catch (err) {
    client.close();
    if (options.signal?.aborted) throw err;
    throw new HelperUnavailableError(await whyNotAnswering(container, err), { cause: err });
  }
}

/** Pings every `everyMs` until one is answered; rejects like ping once `signal` fires. */
async function pingUntilAnswered(client: ChannelClient, signal: AbortSignal, everyMs: number): Promise<void> {
  for (;;) {
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(), everyMs);
    const unlisten = onAbort(signal, () => attempt.abort());
    try {
      await client.ping(attempt.signal);
      return;
    } catch (err) {
      if (signal.aborted || !(err instanceof Error && err.name === "AbortError")) throw err;
    } finally {
      clearTimeout(timer);
      unlisten();
    }
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
