import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_PAYLOAD_TAG, checkpointPayload } from "../../../src/audit/checkpoint.js";
import { auditKeyId, formatVerifyReport, verifyAuditLines } from "../../../src/audit/index.js";
import { rechain, sessionLog, testWriter } from "./chain-fixture.js";

const key = generateKeyPairSync("ed25519").privateKey;
const keyId = auditKeyId(key);
const log = sessionLog(key);

/** `lines` with line `n` (1-based) replaced by `edit(line)`. */
const edited = (lines: readonly string[], n: number, edit: (line: string) => string) =>
  lines.map((l, i) => (i === n - 1 ? edit(l) : l));
const without = (lines: readonly string[], ...ns: number[]) => lines.filter((_, i) => !ns.includes(i + 1));
const faultOf = (lines: readonly string[], publicKey = createPublicKey(key)) =>
  verifyAuditLines(lines, { publicKey }).fault;

describe("verifyAuditLines", () => {
  it("an intact, signed log: every stream, how far its checkpoints sign it, and its unsigned tail", () => {
    const report = verifyAuditLines(log, { publicKey: createPublicKey(key) });
    expect(report.fault).toBeUndefined();
    expect(report.streams).toEqual([
      { stream: "tenant:alpha", records: 10, signed: { seq: 9, line: 12, keyId }, unsigned: 0, lastLine: 12 },
      { stream: "session:s1", records: 8, signed: { seq: 7, line: 11, keyId }, unsigned: 0, lastLine: 11 },
      { stream: "server", records: 2, unsigned: 2, lastLine: 6 },
    ]);
    expect(formatVerifyReport(report)).toEqual([
      "intact: 12 record(s) in 3 stream(s), 4 checkpoint(s)",
      `signed by key ${keyId} (the key given with --public-key)`,
      "signed to their last record: 2 stream(s)",
      "unsigned: server seq 0–1 (2 record(s), no checkpoint; last at line 6)",
    ]);
    // Without a key given, the key the file announces is used, and said to be unchecked.
    expect(formatVerifyReport(verifyAuditLines(log))[1]).toBe(
      `signed by key(s) ${keyId} announced in the file (pass --public-key to check they are yours)`,
    );
  });

  it("one record edited: named by its line, stream and seq", () => {
    expect(faultOf(edited(log, 3, (l) => l.replace('"bytes":3', '"bytes":4')))).toEqual({
      kind: "edited",
      line: 3,
      stream: "tenant:alpha",
      seq: 1,
      message:
        "line 3 (tenant:alpha seq 1): edited: its hash is not the prev of the stream's next record (line 4, seq 2)",
    });
  });

  it("one record removed: named by the record after the gap", () => {
    expect(faultOf(without(log, 4))?.message).toBe(
      "line 4 (tenant:alpha seq 3): 1 record(s) removed before it (seq 2)",
    );
  });

  it("two records swapped: the first out of order", () => {
    const swapped = [...log];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    expect(faultOf(swapped)).toMatchObject({
      kind: "reordered",
      line: 3,
      message: "line 3 (tenant:alpha seq 2): reordered: it comes before seq 1 (line 4)",
    });
  });

  it("one record inserted with the chain heads copied: the inserted one, not the original", () => {
    const forged = JSON.parse(log[4]!) as Record<string, unknown>;
    forged.toolCallId = "forged";
    const inserted = [...log.slice(0, 4), JSON.stringify(forged), ...log.slice(4)];
    expect(faultOf(inserted)).toMatchObject({
      kind: "inserted",
      line: 5,
      message: "line 5 (tenant:alpha seq 3): inserted: seq 3 appears twice (lines 5 and 6)",
    });
    // A copy of an earlier record replayed later: the later one.
    const replayed = [...log.slice(0, 5), log[3]!, ...log.slice(5)];
    expect(faultOf(replayed)?.message).toBe(
      "line 6 (tenant:alpha seq 2): inserted: seq 2 appears twice (lines 4 and 6)",
    );
    // A line without a chain after the chain began.
    expect(faultOf([...log.slice(0, 2), '{"level":30,"kind":"tool"}', ...log.slice(2)])?.message).toBe(
      "line 3: no chain link (inserted, or written by a warden without the audit chain)",
    );
  });

  it("a checkpoint removed breaks the chain like any record", () => {
    expect(faultOf(without(log, 7))?.message).toBe(
      "line 7 (tenant:alpha seq 5): 1 record(s) removed before it (seq 4)",
    );
  });

  it("a whole chain rewritten after an edit: the next checkpoint's signature fails", () => {
    const forged = rechain(edited(log, 3, (l) => l.replace('"bytes":3', '"bytes":4')));
    expect(faultOf(forged)).toEqual({
      kind: "bad-signature",
      line: 7,
      stream: "tenant:alpha",
      seq: 4,
      message:
        "line 7 (tenant:alpha seq 4): the checkpoint's signature does not match: a record of tenant:alpha before it was changed and the chain rewritten to hide it, or the checkpoint itself was edited",
    });
  });

  it("the session's end checkpoint cut off: the closed session is reported", () => {
    expect(faultOf(log.slice(0, 10))).toEqual({
      kind: "end-checkpoint-missing",
      line: 10,
      stream: "session:s1",
      seq: 6,
      message:
        "line 10 (session:s1 seq 6): the session closed here but no checkpoint signs its stream after it (its end checkpoint was removed, or the server stopped between the two writes)",
    });
  });

  it("the last tenant checkpoint cut off: intact, with the unsigned tail named (a cut here leaves no trace)", () => {
    const report = verifyAuditLines(log.slice(0, 11), { publicKey: createPublicKey(key) });
    expect(report.fault).toBeUndefined();
    expect(formatVerifyReport(report).slice(3)).toEqual([
      "unsigned: tenant:alpha seq 5–8 (4 record(s), after its checkpoint at line 7; last at line 11)",
      "unsigned: server seq 0–1 (2 record(s), no checkpoint; last at line 6)",
    ]);
  });

  it("signed by another key than the one given, or by a key no record announces", () => {
    const other = generateKeyPairSync("ed25519").publicKey;
    expect(faultOf(log, other)?.message).toBe(
      `line 7 (tenant:alpha seq 4): checkpoint signed by key ${keyId}, not by the key given with --public-key (${auditKeyId(other)})`,
    );
    // Removing the audit-key record (the server stream's last) leaves its checkpoints unverifiable.
    expect(verifyAuditLines(without(log, 6)).fault?.message).toBe(
      `line 6 (tenant:alpha seq 4): checkpoint signed by key ${keyId}, which no audit-key record before it announces`,
    );
  });

  it("a line that is not JSON, and lines before the chain began", () => {
    expect(faultOf(edited(log, 2, (l) => l.slice(0, 20)))?.message).toBe(
      "line 2: not a JSON object (edited, or not an audit log)",
    );
    const older = ['{"level":30,"kind":"session"}', ...log];
    const report = verifyAuditLines(older);
    expect(report.fault).toBeUndefined();
    expect(formatVerifyReport(report)[0]).toBe(
      "intact: 12 record(s) in 3 stream(s), 4 checkpoint(s); 1 line(s) before the chain not checked",
    );
  });

  it("a writer resumed from a file's lines continues every stream's chain", () => {
    const first: string[] = [];
    const a = testWriter(key, first);
    a.write({ kind: "session", event: "created", tenant: "alpha", session: "s2" });
    a.write({ kind: "tool", tenant: "alpha", session: "s2", toolCallId: "c1" });
    const second = [...first];
    const b = testWriter(key, second);
    for (const line of first) b.resume(Buffer.from(line));
    b.write({ kind: "session", event: "adopted", tenant: "alpha", session: "s2" });
    b.write({ kind: "session", event: "closed", tenant: "alpha", session: "s2", reason: "idle" });
    b.endSession("alpha", "s2");
    const report = verifyAuditLines(second, { publicKey: createPublicKey(key) });
    expect(report.fault).toBeUndefined();
    expect(JSON.parse(second[2]!).chain).toEqual([
      { stream: "tenant:alpha", seq: 2, prev: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { stream: "session:s2", seq: 2, prev: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
  });
});

describe("checkpointPayload", () => {
  it("is the fixed, versioned text: tag, stream, seq and prev hash on four lines", () => {
    expect(checkpointPayload("session:s1", 7, "ab".repeat(32)).toString("utf8")).toBe(
      `warden-audit-checkpoint v1\nsession:s1\n7\n${"ab".repeat(32)}`,
    );
    expect(CHECKPOINT_PAYLOAD_TAG).toBe("warden-audit-checkpoint v1");
  });
});

describe("AuditChainWriter.checkpointAll (a graceful shutdown)", () => {
  it("signs every stream to its last record, the key record's own stream included, even when nothing was signed before", () => {
    const lines: string[] = [];
    const writer = testWriter(key, lines);
    writer.write({ kind: "request", tenant: "alpha", method: "GET", route: "/v1/sessions", status: 200 });
    writer.checkpointAll();
    const report = verifyAuditLines(lines, { publicKey: createPublicKey(key) });
    expect(report.fault).toBeUndefined();
    expect(report.streams.map((s) => [s.stream, s.unsigned])).toEqual([
      ["tenant:alpha", 0],
      ["server", 0],
    ]);
  });
});
