/** The running-call tracker and the audit lines it links (src/server/sessions/running-calls.ts). */
import { expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import { linkedAuditLog, RunningCalls } from "../../../../src/server/sessions/running-calls.js";

it("names the one call running at a time; none when no call or two calls ran then", () => {
  const calls = new RunningCalls();
  const endA = calls.start("s1", { toolCallId: "a", batch: "b1" }, 1000);
  endA(2000);
  endA(9000); // the batch's end marks its calls again: the first end counts
  const endB = calls.start("s1", { toolCallId: "b", batch: "b2" }, 3000);
  calls.start("s1", { toolCallId: "c", batch: "b2" }, 3500);
  expect(calls.at("s1", 1500)).toEqual({ toolCallId: "a", batch: "b1" });
  expect(calls.at("s1", 2500)).toBeUndefined();
  expect(calls.at("s1", 3200)).toEqual({ toolCallId: "b", batch: "b2" });
  expect(calls.at("s1", 3600)).toBeUndefined(); // b and c both running
  expect(calls.at("s2", 1500)).toBeUndefined();
  expect(calls.batchOf("s1", "c")).toBe("b2");
  endB(4000);
  expect(calls.at("s1", 4100)).toEqual({ toolCallId: "c", batch: "b2" });
  calls.forget("s1");
  expect(calls.at("s1", 1500)).toBeUndefined();
});

it("links a network line by its connection's start (time - durationMs) and a secret line by its time", () => {
  const calls = new RunningCalls();
  const t0 = Date.parse("2026-12-07T12:00:00.000Z");
  calls.start("s1", { toolCallId: "c1", batch: "b1" }, t0)(t0 + 1000);
  const memory = createMemoryAuditLog();
  const log = linkedAuditLog(memory, calls, "s1");
  const network = {
    kind: "network" as const,
    tenant: "alpha",
    session: "s1",
    domain: "a.test",
    port: 443,
    method: "CONNECT",
    decision: "allow" as const,
    rule: "a.test:443",
    bytesIn: 1,
    bytesOut: 1,
  };
  // Ended 5 s after the call, but started during it.
  log.write({ ...network, time: "2026-12-07T12:00:05.500Z", durationMs: 5000 });
  // Started after the call ended.
  log.write({ ...network, time: "2026-12-07T12:00:05.500Z", durationMs: 100 });
  const secret = {
    kind: "secret" as const,
    tenant: "alpha",
    session: "s1",
    secrets: ["GH"],
    decision: "use" as const,
  };
  log.write({
    ...secret,
    host: "a.test",
    port: 443,
    method: "GET",
    path: "/",
    time: "2026-12-07T12:00:00.500Z",
  });
  log.write({ kind: "session", event: "created", tenant: "alpha", session: "s1" });
  expect(memory.entries.map((e) => ("toolCallId" in e ? [e.kind, e.toolCallId, e.batch] : [e.kind]))).toEqual(
    [["network", "c1", "b1"], ["network"], ["secret", "c1", "b1"], ["session"]],
  );
});
