/** The noisy-neighbour bench's tail split, pure parts and the audit log's pairing: where B's slowest calls spent their time. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readCallTimings, tailSplit } from "../../../bench/sections/noisy-tail.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function auditFile(lines: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), "noisy-tail-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return path;
}

const route = "/v1/sessions/:id/tool-calls";

describe("readCallTimings", () => {
  it("pairs the tenant's k-th tool line with its k-th tool-calls request, other tenants and routes aside", () => {
    const path = auditFile([
      { kind: "request", tenant: "b", route: "/v1/sessions", durationMs: 90 },
      { kind: "tool", tenant: "b", toolCallId: "b0", durationMs: 3 },
      { kind: "tool", tenant: "a", toolCallId: "x", durationMs: 500 },
      { kind: "request", tenant: "b", route, durationMs: 5 },
      { kind: "request", tenant: "a", route, durationMs: 600 },
      { kind: "tool", tenant: "b", toolCallId: "b1", durationMs: 14 },
      { kind: "request", tenant: "b", route, durationMs: 17 },
    ]);
    expect([...readCallTimings(path, "b")]).toEqual([
      ["b0", { requestMs: 5, toolMs: 3 }],
      ["b1", { requestMs: 17, toolMs: 14 }],
    ]);
  });

  it("refuses lines it cannot pair, naming the counts", () => {
    const path = auditFile([{ kind: "tool", tenant: "b", toolCallId: "b0", durationMs: 3 }]);
    expect(() => readCallTimings(path, "b")).toThrow(`b: 1 tool lines but 0 tool-calls requests in ${path}`);
  });
});

describe("tailSplit", () => {
  const timings = new Map([
    ["c0", { requestMs: 4, toolMs: 3 }],
    ["c1", { requestMs: 30, toolMs: 28 }],
    ["c2", { requestMs: 5, toolMs: 4 }],
    ["c3", { requestMs: 10, toolMs: 8 }],
  ]);

  it("averages the slowest fraction of calls (at least one), with the server's timings of each", () => {
    expect(tailSplit([6, 40, 7, 12], ["c0", "c1", "c2", "c3"], timings, 0.01)).toEqual({
      calls: 1,
      clientMs: 40,
      requestMs: 30,
      toolMs: 28,
    });
    expect(tailSplit([6, 40, 7, 12], ["c0", "c1", "c2", "c3"], timings, 0.5)).toEqual({
      calls: 2,
      clientMs: 26,
      requestMs: 20,
      toolMs: 18,
    });
  });

  it("leaves out calls the audit log has no timings for", () => {
    expect(tailSplit([99, 6], ["missing", "c0"], timings, 0.01)).toEqual({
      calls: 1,
      clientMs: 6,
      requestMs: 4,
      toolMs: 3,
    });
  });
});
