import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileAuditLog, createMemoryAuditLog, repairTornTail } from "../../../src/server/audit.js";
import { startServer } from "../../../src/server/server.js";
import { reapSessions } from "../../../src/server/sessions/close.js";
import { RecordStore, type SessionRecord } from "../../../src/server/sessions/record-store.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../helpers/server-fakes.js";

describe("warden serve: lifecycle", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-life-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("the reaper closes idle sessions after idleTtlMs and old ones after maxLifetimeMs", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const backend = new FakeBackend();
    const config = testConfig(dir, [
      tenant("alpha", { idleTtlMs: 1000, maxLifetimeMs: 5000 }),
      tenant("beta"),
    ]);
    const server = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
      now: () => now,
    });
    const create = async () =>
      (
        await server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload: {} })
      ).json().id;
    const idle = await create();
    const busy = await create();
    now += 900;
    await server.app.inject({
      method: "POST",
      url: `/v1/sessions/${busy}/tool-calls`,
      headers: auth("alpha"),
      payload: { toolCalls: [{ id: "c", name: "echo", arguments: { text: "x" } }] },
    });
    now += 200;
    expect(await reapSessions(server.ctx)).toEqual([idle]);
    expect(await readdir(join(dir, "sessions"))).toEqual([`${busy}.json`]);
    for (let i = 0; i < 5; i++) {
      now += 800;
      await server.app.inject({
        method: "POST",
        url: `/v1/sessions/${busy}/tool-calls`,
        headers: auth("alpha"),
        payload: { toolCalls: [{ id: "c", name: "echo", arguments: { text: "x" } }] },
      });
    }
    expect(now - Date.parse("2026-01-01T00:00:00Z")).toBe(5100);
    expect(await reapSessions(server.ctx)).toEqual([busy]);
    expect(backend.containers.size).toBe(0);
    await server.shutdown(0);
  });

  it("restart: adopts recorded live sessions, drops records whose container is gone, removes orphans", async () => {
    const backend = new FakeBackend();
    const config = testConfig(dir);
    const first = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
    const make = async () =>
      (
        await first.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload: {} })
      ).json().id;
    const kept = await make();
    const lost = await make();
    // Simulate a crash: no shutdown. One container vanished; one orphan was created without a record.
    const lostContainer = [...backend.containers.values()].find((c) => c.sessionId === lost)!;
    backend.containers.delete(lostContainer.containerId);
    backend.containers.set("orphan-1", {
      containerId: "orphan-1",
      sessionId: "orphan-session",
      tenant: "beta",
      controller: "elsewhere:1",
      running: true,
    });
    // Another server instance's session (a stable serve@ owner id): that server adopts it, not this one.
    backend.containers.set("other-server-1", {
      containerId: "other-server-1",
      sessionId: "other-server-session",
      tenant: "beta",
      controller: "serve@otherhost-0123456789ab",
      running: true,
    });
    backend.containers.set("foreign-1", {
      containerId: "foreign-1",
      sessionId: "foreign-session",
      tenant: "someone-else",
      controller: "elsewhere:1",
      running: true,
    });
    // A crashed server's lock is stale (its pid is gone); in one process, removing it stands for that.
    await rm(join(dir, "serve.lock"));
    const audit = createMemoryAuditLog();
    const second = await startServer({ config, ...serverParts(backend), audit, listen: false });
    expect(second.reconciled).toEqual({
      adopted: [kept],
      dropped: [lost],
      orphansRemoved: ["orphan-session"],
      egressRemoved: [],
      volumesRemoved: [],
      socketDirsRemoved: [],
      skipped: ["other-server-session"],
      uploadsRemoved: [],
      interrupted: [],
    });
    expect([...backend.containers.keys()].sort()).toEqual(["fake-1", "foreign-1", "other-server-1"]);
    expect(await readdir(join(dir, "sessions"))).toEqual([`${kept}.json`]);
    const res = await second.app.inject({
      method: "POST",
      url: `/v1/sessions/${kept}/tool-calls`,
      headers: auth("alpha"),
      payload: { toolCalls: [{ id: "c", name: "echo", arguments: { text: "after restart" } }] },
    });
    expect(res.json().results[0].content).toEqual([{ type: "text", text: "after restart" }]);
    expect(
      // Records are visited in file-name (random id) order, so compare the events as a set.
      audit.entries
        .filter((e) => e.kind === "session")
        .map((e) => (e as { event: string }).event)
        .sort(),
    ).toEqual(["adopted", "orphan-removed", "record-dropped"]);
    await second.shutdown(0);
    await first.shutdown(0);
  });

  it("restart: a record whose env a session may no longer set is dropped (env-refused), never adopted with it", async () => {
    const backend = new FakeBackend();
    const config = testConfig(dir);
    const first = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
    const id = (
      await first.app.inject({
        method: "POST",
        url: "/v1/sessions",
        headers: auth("alpha"),
        payload: { env: { CI: "1" } },
      })
    ).json().id;
    // As an older server wrote it, before GIT_* was refused (session/session-env.ts).
    const file = join(dir, "sessions", `${id}.json`);
    const record = JSON.parse(await readFile(file, "utf8")) as SessionRecord;
    await writeFile(file, JSON.stringify({ ...record, env: { CI: "1", GIT_CONFIG_COUNT: "1" } }));
    await rm(join(dir, "serve.lock"));
    const audit = createMemoryAuditLog();
    const second = await startServer({ config, ...serverParts(backend), audit, listen: false });
    expect([second.reconciled.adopted, second.reconciled.dropped]).toEqual([[], [id]]);
    expect(audit.entries.filter((e) => e.kind === "session")).toEqual([
      expect.objectContaining({ event: "record-dropped", session: id, reason: "env-refused" }),
    ]);
    expect(backend.containers.size).toBe(0);
    await second.shutdown(0);
    await first.shutdown(0);
  });

  it("start: the backend's unused socket directories are swept and reported", async () => {
    const backend = Object.assign(new FakeBackend(), {
      sweeps: 0,
      async removeUnusedSocketDirs() {
        this.sweeps++;
        return ["/run/warden-channels/0123456789abcdef"];
      },
    });
    const server = await startServer({
      config: testConfig(dir),
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
    expect([backend.sweeps, server.reconciled.socketDirsRemoved]).toEqual([
      1,
      ["/run/warden-channels/0123456789abcdef"],
    ]);
    await server.shutdown(0);
  });

  it("record store writes atomically and ignores temp files a crash left", async () => {
    const store = new RecordStore(dir);
    await store.init();
    const record: SessionRecord = {
      version: 1,
      id: "s1",
      tenant: "alpha",
      containerId: "c1",
      image: "img",
      workspaceMode: "copy",
      limits: {},
      createdAt: "2026-01-01T00:00:00.000Z",
      expiresAt: "2026-01-01T01:00:00.000Z",
    };
    await store.put(record);
    await writeFile(join(dir, "sessions", "s2.json.tmp-abc"), '{"version":1,"id":"s2"');
    await writeFile(join(dir, "sessions", "s3.json"), "{torn");
    await store.init();
    expect(await readdir(join(dir, "sessions"))).toEqual(["s1.json", "s3.json"]);
    expect(await store.list()).toEqual({ records: [record], invalid: ["s3.json"] });
    await expect(store.delete("../../etc/passwd")).rejects.toThrow("Invalid session id");
  });

  it("the audit log is one JSON object per line; a torn last line is cut off at start", async () => {
    const path = join(dir, "audit.jsonl");
    const log = createFileAuditLog(path);
    log.write({ kind: "session", event: "created", tenant: "alpha", session: "s1" });
    await appendFile(path, '{"level":30,"kind":"tool","ten');
    expect(repairTornTail(path)).toBe('{"level":30,"kind":"tool","ten'.length);
    const again = createFileAuditLog(path);
    again.write({ kind: "session", event: "closed", tenant: "alpha", session: "s1", reason: "deleted" });
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines.at(-1)).toBe("");
    const parsed = lines.slice(0, -1).map((l) => JSON.parse(l));
    expect(parsed.map((p) => [p.kind, p.event, p.session])).toEqual([
      ["session", "created", "s1"],
      ["session", "closed", "s1"],
    ]);
    expect(typeof parsed[0].time).toBe("string");
  });

  it("a torn last line longer than the 1 MiB read chunk is cut off whole, back to the line before it", async () => {
    const path = join(dir, "audit.jsonl");
    const whole = '{"kind":"session"}\n';
    const torn = `{"kind":"tool","toolCallId":"${"x".repeat(3 * 1024 * 1024)}`;
    await writeFile(path, whole + torn);
    expect(repairTornTail(path)).toBe(torn.length);
    expect(await readFile(path, "utf8")).toBe(whole);
    // A file that is one torn line (no newline at all) is emptied.
    await writeFile(path, torn);
    expect(repairTornTail(path)).toBe(torn.length);
    expect(await readFile(path, "utf8")).toBe("");
  });
});
