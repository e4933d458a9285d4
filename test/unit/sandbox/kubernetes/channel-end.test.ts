import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  channelEndedMessage,
  DEFAULT_END_SETTLE,
  endedPodFinal,
  endedPodState,
  settleDelayMs,
} from "../../../../src/sandbox/kubernetes/channel-end.js";

const pod = (phase: string, state: object, extra: Partial<V1Pod> = {}): V1Pod => ({
  ...extra,
  status: { phase, containerStatuses: [{ name: "sandbox", state } as never] },
});
const running = pod("Running", { running: {} });
const completed = { terminated: { reason: "Completed", exitCode: 0, message: "injected text" } };

describe("after a channel's helper ended: what the Pod's status says", () => {
  it("a running Pod runs; a 404 is gone for good; a Pod being deleted is gone, not yet for good", () => {
    expect(endedPodState(running)).toEqual({ ok: true });
    expect(endedPodState(null)).toEqual({
      ok: false,
      kind: "gone",
      why: "the API answers 404 (it no longer exists)",
      final: true,
    });
    expect(endedPodState({ ...running, metadata: { deletionTimestamp: new Date() } })).toEqual({
      ok: false,
      kind: "gone",
      why: "it is being deleted",
      final: false,
    });
  });

  it("a container that terminated has ended; final only once the phase is Succeeded or Failed; its termination message is not quoted", () => {
    expect(endedPodState(pod("Running", completed))).toEqual({
      ok: false,
      kind: "ended",
      why: "its phase is Running, its container terminated (reason Completed, exit code 0)",
      final: false,
    });
    expect(endedPodState(pod("Succeeded", completed))).toEqual({
      ok: false,
      kind: "ended",
      why: "its phase is Succeeded, its container terminated (reason Completed, exit code 0)",
      final: true,
    });
    expect(
      endedPodState(pod("Failed", { terminated: { reason: "Error", exitCode: 128, signal: 9 } })),
    ).toMatchObject({
      why: "its phase is Failed, its container terminated (reason Error, exit code 128, signal 9)",
      final: true,
    });
    expect(endedPodState({ status: { phase: "Failed", reason: "Evicted" } })).toMatchObject({
      kind: "ended",
      why: "its phase is Failed, reason Evicted",
      final: true,
    });
  });

  it("reads again while the Pod runs or is ending, every everyMs until windowMs after the end; a final or failed read is the answer", () => {
    const settle = { windowMs: 1000, everyMs: 300 };
    const runs = endedPodState(running);
    expect([0, 300, 800, 999, 1000, 5000].map((ms) => settleDelayMs(runs, ms, settle))).toEqual([
      300,
      300,
      200,
      1,
      undefined,
      undefined,
    ]);
    expect(settleDelayMs(endedPodState(pod("Running", completed)), 0, settle)).toBe(300);
    expect(settleDelayMs(endedPodState(pod("Succeeded", completed)), 0, settle)).toBeUndefined();
    expect(settleDelayMs(endedPodState(null), 0, settle)).toBeUndefined();
    expect(settleDelayMs({ readError: "connect ECONNREFUSED" }, 0, settle)).toBeUndefined();
    expect(DEFAULT_END_SETTLE).toEqual({ windowMs: 3000, everyMs: 250, reuseMs: 1000 });
    expect(endedPodFinal({ readError: "x" })).toBe(false);
  });

  it("says a Pod that ended has ended, why, that the session is over and what to do", () => {
    const reason =
      "the channel's helper in Pod ns/p ended (command terminated with exit code 137; killed by signal 9, SIGKILL)";
    expect(channelEndedMessage("ns/p", reason, endedPodState(pod("Succeeded", completed)))).toBe(
      `the sandbox Pod ns/p has ended: its phase is Succeeded, its container terminated (reason Completed, exit code 0), as a GET of it said after its exec channel ended (${reason}); ` +
        "a container ends when its PID 1 (warden-helper --init) exits (a command in the sandbox can make it: e.g. kill -TERM 1) or is killed (e.g. out of memory); " +
        "this session is over, what ran in it and its files are lost; start a new session, and DELETE this one.",
    );
    expect(channelEndedMessage("ns/p", reason, endedPodState(running))).toMatch(
      / while the Pod still runs: /,
    );
  });
});
