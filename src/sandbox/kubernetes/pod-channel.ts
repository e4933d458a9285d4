/**
 * A Kubernetes session's channel that outlives its exec stream. The stream (transport.ts) can end
 * under a live session: the CRI streaming server closes a stream idle for its `stream_idle_timeout`
 * (containerd default 4 h; it sees the stream when the API server proxies the WebSocket through:
 * before Kubernetes 1.30 or without TranslateStreamCloseWebsocketRequests, whose SPDY pings every
 * 5 s keep containerd's side busy), a proxy in front of the API server closes idle connections, an
 * API server restart or a network blip cuts it. So:
 * - heartbeat: while the channel is quiet, a running call's silence included, the helper is pinged
 *   `cluster.heartbeatMs` after the last traffic (../channel/protocol/heartbeat.ts), so the stream
 *   is never idle; an unanswered ping closes it (a warm pool spare beats alike: create.ts);
 * - reconnect: when the connection is lost (the stream ended without the helper's exit status, or
 *   the heartbeat went unanswered) and the session is not closing, a background attempt (and any
 *   call meanwhile) re-opens the channel as adoption does (start-pod.ts connectHelper: the new
 *   helper SIGKILLs the previous channel's processes), with bounded retries
 *   (reconnect-policy.ts); a Pod that is gone or not running fails every later call, naming it.
 *   A helper that ended (killed by a newer channel: another controller took the Pod over) is
 *   not re-opened, or two controllers would take the Pod from each other forever; every later
 *   call reads the Pod and fails naming it, why and what to do (channel-end.ts: a Pod that still
 *   reads as running right after the end is read again for up to 3 s, since the kubelet reports a
 *   container's end, e.g. after `kill -TERM 1` ended its PID 1, only a moment later; a verdict
 *   short of final is read again by the next call). Its Pod is not deleted: a helper killed from
 *   inside (`kill -9 -1`) cannot be told from one ended by another controller's newer channel (a
 *   takeover under the same replica id, docs/scale-out.md), and deleting would end that
 *   controller's live session; a Pod whose container ended (Succeeded, Failed) holds nothing but
 *   its API object, which shows why it ended; the session's DELETE, its expiry or `warden gc`
 *   removes it, as a restarted server does a Pod that is not running. A re-opened helper that
 *   never answers while the Pod runs is held by the sandbox: the Pod is deleted (no other
 *   controller answers through a stopped helper).
 * A call that was running when the stream ended gets a SandboxError saying so, never a hang.
 * Each end, re-open and failed round is reported to `cluster.onChannelEvent` (the server logs and counts them).
 */
import type { V1Pod } from "@kubernetes/client-node";
import { SandboxError, SandboxNotRunningError } from "../../errors.js";
import { AbortError, onAbort, throwIfAborted } from "../../util/index.js";
import type { ChannelEvent } from "../backend.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { type Heartbeat, startHeartbeat } from "../channel/protocol/heartbeat.js";
import { channelIOVia } from "../channel/protocol/io.js";
import type { SandboxIO } from "../io.js";
import {
  channelEndedMessage,
  DEFAULT_END_SETTLE,
  type EndedPodState,
  type EndSettle,
  endedPodFinal,
  endedPodState,
  settleDelayMs,
} from "./channel-end.js";
import { type KubernetesCluster, POD_READ_TIMEOUT_MS, readPodWithin } from "./cluster.js";
import { deletePod } from "./delete-pod.js";
import { HelperSilentError } from "./helper-copy.js";
import {
  DEFAULT_RECONNECT_POLICY,
  podReachable,
  type ReconnectPolicy,
  reconnectDelayMs,
} from "./reconnect-policy.js";
import { connectHelper } from "./start-pod.js";

/** Default of KubernetesCluster.heartbeatMs: 60 s, far below any streaming idle timeout in use (minutes to hours). */
export const DEFAULT_HEARTBEAT_MS = 60_000;

/** The live channel of one Pod: see the file comment. Made by KubernetesSandbox. */
export class PodChannel {
  private current: ChannelClient;
  private heartbeat: Heartbeat | undefined;
  private reopening: Promise<ChannelClient> | undefined;
  private gone: Error | undefined;
  /** Set when the helper ended (see the file comment): its reason, when, and, once final, the error. */
  /**
   * Set when the helper ended: why, when (performance.now() ms), the verdict once final (`error`),
   * the last one that was not and when it was read (`recent`), and the reading under way.
   */
  private ended:
    | {
        reason: string;
        at: number;
        error?: Error;
        recent?: { error: Error; at: number };
        /** The reading under way; set back to undefined when it settles. */
        explaining?: Promise<Error> | undefined;
      }
    | undefined;
  private closing = false;
  private lostReason = "";
  /** Channels whose connection was lost (or went silent): their calls' errors say so. */
  private readonly lost = new WeakSet<ChannelClient>();
  /** Channels re-opened so far (each after the previous one's stream ended). */
  reconnects = 0;

  private readonly sessionId: string;
  private readonly log: ((line: string) => void) | undefined;
  private readonly policy: ReconnectPolicy;
  private readonly settle: EndSettle;
  private readonly podReadTimeoutMs: number;

  /**
   * `client` is Pod `pod`'s connected channel; `sessionId` goes into the events; `log` gets the
   * helper's stderr lines of re-opened channels; `policy` bounds each reconnect (default
   * DEFAULT_RECONNECT_POLICY); `settle` how long a Pod that still runs is read again after its
   * helper ended (default DEFAULT_END_SETTLE, channel-end.ts); `podReadTimeoutMs` how long one GET
   * of the Pod may take (default POD_READ_TIMEOUT_MS, shorter than the clients' backend.requestTimeoutMs).
   */
  constructor(
    private readonly cluster: KubernetesCluster,
    readonly pod: string,
    client: ChannelClient,
    options: {
      sessionId: string;
      log?: (line: string) => void;
      policy?: ReconnectPolicy;
      settle?: EndSettle;
      podReadTimeoutMs?: number;
    },
  ) {
    this.sessionId = options.sessionId;
    this.log = options.log;
    this.policy = options.policy ?? DEFAULT_RECONNECT_POLICY;
    this.settle = options.settle ?? DEFAULT_END_SETTLE;
    this.podReadTimeoutMs = options.podReadTimeoutMs ?? POD_READ_TIMEOUT_MS;
    this.current = client;
    this.watch(client);
  }

  /**
   * The open channel: the current one, or a re-opened one after its stream ended. Rejects the Pod's
   * SandboxError once it is gone, SandboxNotRunningError after close, SandboxError when a round of
   * attempts failed (the next call tries again), AbortError when `signal` fires.
   */
  async client(signal?: AbortSignal): Promise<ChannelClient> {
    throwIfAborted(signal);
    if (this.closing) throw new SandboxNotRunningError(this.pod);
    if (this.gone) throw this.gone;
    if (this.ended) throw await raceAbort(this.endedError(), signal);
    if (!this.current.closed) return this.current;
    this.reopening ??= this.reopen().finally(() => {
      this.reopening = undefined;
    });
    return raceAbort(this.reopening, signal);
  }

  /**
   * Runs `use` on the open channel. A call cut by the end of the stream rejects SandboxError naming
   * the Pod and why (its command was stopped: the helper kills what a lost channel started).
   */
  async with<T>(signal: AbortSignal | undefined, use: (client: ChannelClient) => Promise<T>): Promise<T> {
    const client = await this.client(signal);
    try {
      return await use(client);
    } catch (err) {
      if (!(err instanceof SandboxNotRunningError) || this.closing) throw err;
      if (this.ended && client === this.current) throw await raceAbort(this.endedError(), signal);
      if (!this.lost.has(client)) throw err;
      throw new SandboxError(
        `the exec stream to Pod ${this.cluster.namespace}/${this.pod} ended while this call ran (${client.closeReason}); ` +
          "what the call started was stopped, and the channel is re-opened for the next call: retry it.",
        { cause: err },
      );
    }
  }

  /** The SandboxIO over this channel (../channel/protocol/io.ts's, each request through `with`). */
  io(): SandboxIO {
    return channelIOVia(
      (signal, use) => this.with(signal, use),
      () => this.close(),
    );
  }

  /** Stops the heartbeat and closes the channel for good (the session ends). Idempotent. */
  close(): void {
    this.closing = true;
    this.heartbeat?.stop();
    this.current.close();
  }

  /** Heartbeat on `client`, and a background re-open when its stream ends unexpectedly. */
  private watch(client: ChannelClient): void {
    const everyMs = this.cluster.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    let silent = false;
    this.heartbeat = startHeartbeat(client, {
      everyMs,
      onUnanswered: (reason) => {
        silent = true;
        client.close(`heartbeat: ${reason}`);
      },
    });
    client.onClosed((reason) => {
      if (this.closing || client !== this.current) return;
      // Only a lost connection is re-opened. A helper that ended (killed by a newer channel:
      // another controller took the Pod over, or by a command) or a corrupted stream (written by
      // someone else) is not fought over: every later call fails naming the Pod, why and what
      // to do (endedError), or with the corruption.
      if (!silent && !client.streamLost) {
        const closed = client.closedError();
        if (!(closed instanceof SandboxNotRunningError)) {
          this.gone = closed; // a corrupted stream: its own message
          this.report({ outcome: "failed", reason, error: closed.message, final: true });
          return;
        }
        this.ended = { reason, at: performance.now() };
        this.endedError().then((error) =>
          this.report({ outcome: "failed", reason, error: error.message, final: true }),
        );
        return;
      }
      this.lost.add(client);
      this.lostReason = reason;
      this.report({ outcome: "lost", reason });
      this.client().catch(() => {}); // reopen reports the outcome
    });
  }

  /** One bounded round of attempts (see the file comment); resolves with the new channel. */
  private async reopen(): Promise<ChannelClient> {
    const { namespace } = this.cluster;
    const reason = this.lostReason;
    let last = "";
    for (let attempt = 0; ; attempt++) {
      const reachable = await this.readPod();
      if (reachable !== true && reachable.final) return this.giveUp(reason, reachable.error, true);
      if (reachable === true) {
        try {
          const client = await connectHelper(this.cluster, this.pod, this.log ? { log: this.log } : {});
          if (this.closing) {
            client.close();
            throw new SandboxNotRunningError(this.pod);
          }
          this.current = client;
          this.reconnects++;
          this.watch(client);
          this.report({ outcome: "reopened", reason, attempts: attempt + 1 });
          return client;
        } catch (err) {
          if (this.closing) throw new SandboxNotRunningError(this.pod);
          if (err instanceof HelperSilentError) return this.endHeld(reason, err);
          last = (err as Error).message;
        }
      } else last = reachable.error.message;
      const delayMs = reconnectDelayMs(attempt, this.policy);
      if (delayMs === undefined)
        return this.giveUp(
          reason,
          new SandboxError(
            `the exec channel to Pod ${namespace}/${this.pod} ended (${reason}) and could not be re-opened in ${attempt + 1} attempts (last: ${last}); the next call tries again.`,
          ),
          false,
        );
      await new Promise((r) => setTimeout(r, delayMs).unref());
      if (this.closing) throw new SandboxNotRunningError(this.pod);
    }
  }

  /**
   * The error of every call after the helper ended (channel-end.ts), from GETs of the Pod: while
   * it still reads as running, again until `settle.windowMs` after the end (the kubelet reports a
   * container's end a moment later). Kept once final (the Pod gone, or Succeeded or Failed);
   * any other verdict (it runs, it is being deleted, the read failed) is reused for
   * `settle.reuseMs`, then read again by the next call (so a client retrying in a loop does not
   * make as many GETs). Concurrent callers share one reading.
   */
  private endedError(): Promise<Error> {
    const ended = this.ended;
    if (!ended) throw new Error("endedError before the helper ended");
    if (ended.error) return Promise.resolve(ended.error);
    if (ended.recent && performance.now() - ended.recent.at < this.settle.reuseMs)
      return Promise.resolve(ended.recent.error);
    ended.explaining ??= this.settleEndedPod(ended.at).then((state) => {
      const message = channelEndedMessage(`${this.cluster.namespace}/${this.pod}`, ended.reason, state);
      const error = new SandboxNotRunningError(this.pod, { message });
      if (endedPodFinal(state)) ended.error = error;
      else ended.recent = { error, at: performance.now() };
      ended.explaining = undefined;
      return error;
    });
    return ended.explaining;
  }

  /**
   * Reads the Pod until settleDelayMs says the reading is the answer: within `settle.windowMs`
   * plus one read, each bounded by `podReadTimeoutMs`.
   */
  private async settleEndedPod(endedAt: number): Promise<EndedPodState> {
    // Timers fire a little late or early against performance.now(): the count bounds it too.
    const maxReads = Math.ceil(this.settle.windowMs / this.settle.everyMs) + 1;
    for (let reads = 1; ; reads++) {
      const state = await this.readEndedPod();
      const delayMs = settleDelayMs(state, performance.now() - endedAt, this.settle);
      if (delayMs === undefined || reads >= maxReads || this.closing) return state;
      await new Promise((r) => setTimeout(r, delayMs).unref());
    }
  }

  /** One GET of the Pod as channelEndedMessage takes it. */
  private async readEndedPod(): Promise<EndedPodState> {
    return readPodWithin(this.cluster, this.pod, this.podReadTimeoutMs).then(endedPodState, (err: Error) => ({
      readError: err.message,
    }));
  }

  /**
   * true when the Pod runs; else the error (`final` when the Pod is gone or will not run again; an
   * API failure is not final: the API server may be restarting).
   */
  private async readPod(): Promise<true | { error: Error; final: boolean }> {
    const { namespace } = this.cluster;
    let pod: V1Pod | null;
    try {
      pod = await readPodWithin(this.cluster, this.pod, this.podReadTimeoutMs);
    } catch (err) {
      return {
        error: new SandboxError(`reading Pod ${namespace}/${this.pod}: ${(err as Error).message}`),
        final: false,
      };
    }
    const reachable = podReachable(pod);
    if (reachable.ok) return true;
    const error = new SandboxError(
      `the sandbox Pod ${namespace}/${this.pod} cannot be reached: ${reachable.why} (its exec channel ended: ${this.lostReason}); start a new session.`,
    );
    return { error, final: true };
  }

  /**
   * The helper was started again in the running Pod and never answered: a process in the sandbox
   * holds it (a `kill -STOP -1` loop stops each new helper before it can end the old channel's
   * processes). Another attempt would fail alike and, on gVisor, leave one more root exec process
   * on the node, so the session ends here: its Pod is deleted (with what runs in it) and every
   * later call fails naming it. Found by an attack on the reconnect (issue 18).
   */
  private async endHeld(reason: string, err: HelperSilentError): Promise<never> {
    const { namespace } = this.cluster;
    const deleted = await deletePod(this.cluster, this.pod).then(
      () => "the Pod was deleted with everything in it",
      (e: unknown) => `deleting the Pod failed too: ${(e as Error).message}`,
    );
    return this.giveUp(
      reason,
      new SandboxError(
        `the exec channel to Pod ${namespace}/${this.pod} ended (${reason}) and the warden-helper started again there did not answer while the Pod ran: a process in the sandbox holds it (e.g. stopping every process with SIGSTOP); ${deleted}; start a new session.`,
        { cause: err },
      ),
      true,
    );
  }

  private giveUp(reason: string, error: Error, final: boolean): never {
    if (final) this.gone = error;
    this.report({ outcome: "failed", reason, error: error.message, final });
    throw error;
  }

  private report(event: Omit<ChannelEvent, "pod" | "sessionId" | "reconnects">): void {
    this.cluster.onChannelEvent?.({
      pod: this.pod,
      sessionId: this.sessionId,
      reconnects: this.reconnects,
      ...event,
    });
  }
}

/** `promise`, or AbortError as soon as `signal` fires (the promise itself carries on). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const unlisten = onAbort(signal, () => reject(new AbortError()));
    promise.then(
      (v) => {
        unlisten();
        resolve(v);
      },
      (e: unknown) => {
        unlisten();
        reject(e);
      },
    );
  });
}
