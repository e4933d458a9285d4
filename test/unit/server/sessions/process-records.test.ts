import { describe, expect, it } from "vitest";
import type { ProcessRecord } from "../../../../src/process/index.js";
import { processRecordWriter } from "../../../../src/server/sessions/process-records.js";
import type { SessionRecord } from "../../../../src/server/sessions/record-store.js";

const proc = (id: string): ProcessRecord => ({
  id,
  command: { argv: ["sleep", "9"] },
  cwd: "/workspace",
  shimPid: 10,
  shimStartTime: 20,
  commandPid: 11,
  startedAt: "2026-12-07T00:00:00.000Z",
});

describe("processRecordWriter", () => {
  it("writes each change in order, one at a time, the latest last", async () => {
    const record = { id: "s1" } as SessionRecord;
    const written: string[][] = [];
    let inFlight = 0;
    const write = processRecordWriter({
      record: () => record,
      put: async (r) => {
        inFlight++;
        expect(inFlight).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        written.push((r.processes ?? []).map((p) => p.id));
        inFlight--;
      },
    });
    await Promise.all([write([proc("p1")]), write([proc("p1"), proc("p2")])]);
    expect(written).toEqual([["p1"], ["p1", "p2"]]);
    expect(record.processes?.map((p) => p.id)).toEqual(["p1", "p2"]);
  });

  it("writes nothing before the session's record exists", async () => {
    const puts: SessionRecord[] = [];
    await processRecordWriter({ record: () => undefined, put: async (r) => void puts.push(r) })([proc("p1")]);
    expect(puts).toEqual([]);
  });
});
