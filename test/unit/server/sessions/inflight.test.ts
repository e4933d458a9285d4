/**
 * The in-flight journal (issue 11 item 6): after a crash, every call of a journalled batch gets
 * exactly one final audit line: its own result line, or one `interrupted` line written at the
 * next start, never a second one when recovery itself is repeated.
 */
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileAuditLog } from "../../../../src/server/audit.js";
import { startServer } from "../../../../src/server/server.js";
import { InflightCalls } from "../../../../src/server/sessions/inflight-calls.js";
import { auth, serverParts, testConfig } from "../../../helpers/server-fakes.js";

const line = (e: object) => `${JSON.stringify(e)}\n`;

describe("in-flight call journal", () => {
  let dir: string;
  let auditPath: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-inflight-"));
    auditPath = join(dir, "audit.jsonl");
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a finished batch leaves no file", async () => {
    const journal = new InflightCalls(dir, auditPath);
    await journal.init();
    const done = await journal.begin({ tenant: "t", session: "s", calls: [{ id: "c", name: "bash" }] });
    expect(await readdir(join(dir, "inflight"))).toHaveLength(1);
    await done();
    expect(await readdir(join(dir, "inflight"))).toEqual([]);
  });

  it("recover audits each unfinished call once, by the lines after the batch's audit offset", async () => {
    // An earlier batch of the same session reused id "c2": its line is before the offset.
    await writeFile(auditPath, line({ kind: "tool", session: "s", toolCallId: "c2", tool: "bash" }));
    const journal = new InflightCalls(dir, auditPath);
    await journal.init();
    await journal.begin({
      tenant: "t",
      session: "s",
      calls: [
        { id: "c1", name: "bash" },
        { id: "c2", name: "read" },
        { id: "c3", name: "edit" },
      ],
    });
    // c1 finished before the crash; another session's c2 finished too.
    await appendFile(auditPath, line({ kind: "tool", session: "s", toolCallId: "c1", tool: "bash" }));
    await appendFile(auditPath, line({ kind: "tool", session: "other", toolCallId: "c2", tool: "read" }));
    // A batch whose file was created but not written (crash in between): it had not started.
    await writeFile(join(dir, "inflight", "0-empty.json"), "");

    const audit = createFileAuditLog(auditPath);
    const found = await new InflightCalls(dir, auditPath).recover(audit);
    expect(found).toEqual([
      { tenant: "t", session: "s", toolCallId: "c2", tool: "read" },
      { tenant: "t", session: "s", toolCallId: "c3", tool: "edit" },
    ]);
    expect(await readdir(join(dir, "inflight"))).toEqual([]);
    const lines = (await readFile(auditPath, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const interrupted = lines.filter((l) => l.kind === "interrupted");
    expect(interrupted.map((l) => [l.tenant, l.session, l.toolCallId, l.tool])).toEqual([
      ["t", "s", "c2", "read"],
      ["t", "s", "c3", "edit"],
    ]);
  });

  it("a concurrent batch of the session that reused a call id and finished does not hide the running call", async () => {
    // Red team: ids are the client's, unique within a batch only; matched by session and id, the
    // running batch's "c" counted as finished by the other batch's line and got no final line.
    const server = await startServer({ config: testConfig(dir), ...serverParts(), listen: false });
    try {
      const post = (payload: object) =>
        server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload });
      const sid = (await post({})).json().id as string;
      const batch = (name: string, args: object) =>
        server.app.inject({
          method: "POST",
          url: `/v1/sessions/${sid}/tool-calls`,
          headers: auth("alpha"),
          payload: { toolCalls: [{ id: "c", name, arguments: args }] },
        });
      const running = batch("sleep", { ms: 60_000 });
      await expect.poll(async () => (await readdir(join(dir, "inflight"))).length).toBe(1);
      expect((await batch("echo", { text: "hi" })).statusCode).toBe(200);
      const [file] = await readdir(join(dir, "inflight"));
      const journalled = JSON.parse(await readFile(join(dir, "inflight", file!), "utf8"));
      // The server dies now (kill -9): the next start's recovery finds the sleeping "c" unfinished.
      const found = await new InflightCalls(dir, join(dir, "audit.jsonl")).recover(
        createFileAuditLog(join(dir, "audit.jsonl")),
      );
      expect(found).toEqual([
        { tenant: "alpha", session: sid, batch: journalled.batch, toolCallId: "c", tool: "sleep" },
      ]);
      const tools = (await readFile(join(dir, "audit.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((l) => l.kind === "tool");
      expect(tools).toHaveLength(1); // the echo's
      expect(tools[0].batch).toMatch(/^[0-9a-f-]{36}$/);
      expect(tools[0].batch).not.toBe(journalled.batch);
      await server.shutdown(0);
      await running;
    } finally {
      await server.shutdown(0);
    }
  });

  it("a crash during recovery (lines written, file not yet deleted) does not repeat a line", async () => {
    await writeFile(auditPath, "");
    const journal = new InflightCalls(dir, auditPath);
    await journal.init();
    await journal.begin({ tenant: "t", session: "s", calls: [{ id: "c", name: "bash" }] });
    const [name] = await readdir(join(dir, "inflight"));
    const saved = await readFile(join(dir, "inflight", name!), "utf8");
    const audit = createFileAuditLog(auditPath);
    expect(await journal.recover(audit)).toHaveLength(1);
    await writeFile(join(dir, "inflight", name!), saved);
    expect(await journal.recover(audit)).toEqual([]);
    expect((await readFile(auditPath, "utf8")).trim().split("\n")).toHaveLength(1);
  });
});
