import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RECONNECT_POLICY,
  podReachable,
  reconnectDelayMs,
} from "../../../../src/sandbox/kubernetes/reconnect-policy.js";

const running: V1Pod = {
  status: { phase: "Running", containerStatuses: [{ name: "sandbox", state: { running: {} } } as never] },
};

describe("reconnect policy", () => {
  it("by default waits 0.5, 1, 2 and 4 s between 5 attempts, then gives up", () => {
    const delays = Array.from({ length: 6 }, (_, attempt) => reconnectDelayMs(attempt));
    expect(delays).toEqual([500, 1000, 2000, 4000, undefined, undefined]);
    expect(DEFAULT_RECONNECT_POLICY.attempts).toBe(5);
  });

  it("caps the wait at maxDelayMs", () => {
    const policy = { attempts: 10, firstDelayMs: 1000, maxDelayMs: 3000 };
    expect(Array.from({ length: 4 }, (_, a) => reconnectDelayMs(a, policy))).toEqual([
      1000, 2000, 3000, 3000,
    ]);
  });

  it("re-opens only into a Pod that runs and is not being deleted, and says why not otherwise", () => {
    expect(podReachable(running)).toEqual({ ok: true });
    expect(podReachable(null)).toEqual({ ok: false, why: "it no longer exists" });
    expect(podReachable({ ...running, metadata: { deletionTimestamp: new Date() } })).toEqual({
      ok: false,
      why: "it is being deleted",
    });
    expect(podReachable({ status: { phase: "Failed" } })).toEqual({ ok: false, why: "it is Failed" });
    expect(
      podReachable({
        status: {
          phase: "Running",
          containerStatuses: [{ state: { terminated: { exitCode: 1 } } } as never],
        },
      }),
    ).toEqual({ ok: false, why: "its container is terminated" });
  });
});
