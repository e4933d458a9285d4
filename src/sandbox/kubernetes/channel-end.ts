/**
 * What every later call of a Kubernetes session is told once its channel's helper ended with an
 * exit status (pure, no I/O; pod-channel.ts reads the Pod and throws it). Such a channel is never
 * re-opened (pod-channel.ts): the helper ends so when the Pod is gone, when its container ended (a
 * command in the sandbox made its PID 1, the idle init, exit: `kill -TERM 1`; or it ran out of
 * memory), when a command in the sandbox killed the helper (`kill -KILL $PPID`, `kill -9 -1`), or
 * when another warden controller took the Pod over (its new helper kills every other process), and
 * the last must not be fought over. The message names the Pod as namespace/name in full, why, and
 * what to do; Docker's "Sandbox container <id> is not running." is not used here. Found by an
 * attack on the Kubernetes backend (issue 18).
 *
 * The Pod is read right after the helper's exec stream ends, before the kubelet has noticed that
 * the container ended (it reports the container's end about 0.7 s later on the test node, the
 * Pod's phase about 1.8 s later): a Pod that still reads as running is read again every
 * `everyMs` until `windowMs` after the end (settleDelayMs), and a verdict is kept for later calls
 * only once it is final (the Pod is gone or its phase is Succeeded or Failed): every other one is
 * read again by the next call. Before, the first read's "while the Pod still runs" was kept, and
 * `printf X > /dev/termination-log; kill -TERM 1` left every later call blaming a killed helper or
 * another controller while the Pod was Succeeded (an attack; alike under gVisor after an
 * out-of-memory kill).
 */
import type { V1Pod } from "@kubernetes/client-node";

/**
 * The Pod as read after the helper ended: it still runs; it is not reachable (`gone`: deleted, being
 * deleted, or not running (phase Pending or Unknown, a waiting container); `ended`: its container
 * terminated or its phase is Succeeded or Failed), why, and whether that can no longer change
 * (`final`); or the read failed.
 */
export type EndedPodState =
  | { ok: true }
  | { ok: false; kind: "gone" | "ended"; why: string; final: boolean }
  | { readError: string };

/**
 * How long a Pod that still reads as running is read again after its channel ended (ms), and how
 * long a verdict that is not final is reused before a later call reads the Pod again (`reuseMs`).
 */
export interface EndSettle {
  windowMs: number;
  everyMs: number;
  reuseMs: number;
}

/**
 * Default: read again every 250 ms until 3 s after the end (at most 13 GETs), well past the
 * kubelet's ~1 s status relist and the test node's 1.8 s until phase Succeeded.
 */
export const DEFAULT_END_SETTLE: EndSettle = { windowMs: 3000, everyMs: 250, reuseMs: 1000 };

/**
 * The state of `pod` as the API returned it (null: it answered 404) for channelEndedMessage. The
 * container's termination message is never quoted (no command reaches its file since helper version 7,
 * pod-spec.ts TERMINATION_MESSAGE_PATH, but an older Pod's `/dev/termination-log` was the sandbox's).
 */
export function endedPodState(pod: V1Pod | null): EndedPodState {
  if (!pod) return { ok: false, kind: "gone", why: "the API answers 404 (it no longer exists)", final: true };
  if (pod.metadata?.deletionTimestamp)
    return { ok: false, kind: "gone", why: "it is being deleted", final: false };
  const phase = pod.status?.phase ?? "Pending";
  const state = pod.status?.containerStatuses?.[0]?.state;
  const done = phase === "Succeeded" || phase === "Failed";
  const terminated = state?.terminated;
  if (terminated || done) {
    const how = terminated
      ? `its container terminated (${[
          terminated.reason && `reason ${terminated.reason}`,
          `exit code ${terminated.exitCode}`,
          terminated.signal && `signal ${terminated.signal}`,
        ]
          .filter(Boolean)
          .join(", ")})`
      : pod.status?.reason
        ? `reason ${pod.status.reason}`
        : "";
    return {
      ok: false,
      kind: "ended",
      why: `its phase is ${phase}${how ? `, ${how}` : ""}`,
      final: done,
    };
  }
  if (phase !== "Running") return { ok: false, kind: "gone", why: `its phase is ${phase}`, final: false };
  if (state && !state.running)
    return { ok: false, kind: "gone", why: "its container is waiting", final: false };
  return { ok: true };
}

/** Whether a verdict from `state` holds for every later call: the Pod is gone or ended for good. */
export function endedPodFinal(state: EndedPodState): boolean {
  return "final" in state && state.final;
}

/**
 * How long to wait before reading the Pod again, `elapsedMs` after its channel ended, when the last
 * read gave `state`; undefined when that read is the answer: it is final, it failed (the next call
 * reads again), or the window is over (a Pod that still runs then is said to run: a helper killed
 * from inside, or another controller's).
 */
export function settleDelayMs(
  state: EndedPodState,
  elapsedMs: number,
  settle: Pick<EndSettle, "windowMs" | "everyMs"> = DEFAULT_END_SETTLE,
): number | undefined {
  if ("readError" in state || endedPodFinal(state) || elapsedMs >= settle.windowMs) return undefined;
  return Math.max(1, Math.min(settle.everyMs, settle.windowMs - elapsedMs));
}

/**
 * The message for Pod `where` ("namespace/name") whose channel ended with `reason` (the
 * transport's: "the channel's helper in Pod … ended (<exit status>)"), given the Pod's `state`.
 */
export function channelEndedMessage(where: string, reason: string, state: EndedPodState): string {
  const next = "start a new session, and DELETE this one";
  if ("readError" in state)
    return `the exec channel to Pod ${where} ended (${reason}) and is not re-opened; reading the Pod failed (${state.readError}); ${next}.`;
  if (!state.ok && state.kind === "ended")
    return (
      `the sandbox Pod ${where} has ended: ${state.why}, as a GET of it said after its exec channel ended (${reason}); ` +
      "a container ends when its PID 1 (warden-helper --init) exits (a command in the sandbox can make it: e.g. kill -TERM 1) or is killed (e.g. out of memory); " +
      `this session is over, what ran in it and its files are lost; ${next}.`
    );
  if (!state.ok)
    return `the sandbox Pod ${where} is gone: ${state.why}, as a GET of it said after its exec channel ended (${reason}); what ran in it and its files are lost; ${next}.`;
  return (
    `the exec channel to Pod ${where} ended (${reason}) while the Pod still runs: a command in the sandbox may have killed the channel's helper (e.g. kill -9 -1), ` +
    "or another warden controller took the Pod over; the channel is not re-opened, so two controllers never take a Pod from each other, and the Pod is left running for whoever holds it; " +
    `${next} (deleting it deletes the Pod).`
  );
}
