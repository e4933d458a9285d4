/**
 * One `warden serve` per state directory (issue 11 item 5): the state dir's lock refuses a second
 * server naming the holder's pid, a stale lock (dead pid, or a pid reused by another process) does
 * not block a restart, and a port in use fails with host:port and the config field before anything
 * is reconciled.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../src/server/audit.js";
import { AddressInUseError, startServer } from "../../../src/server/server.js";
import { lockStateDir, processStartTime, StateDirLockedError } from "../../../src/server/state-lock.js";
import { auth, FakeBackend, serverParts, testConfig } from "../../helpers/server-fakes.js";

/** The pid of a process that has exited. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout);
}

/** A TCP listener on a free loopback port. */
async function loopbackListener(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as { port: number }).port };
}

describe("warden serve: state dir lock", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-lock-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a second lock of a held state dir fails naming the holder's pid; release frees it", async () => {
    const first = lockStateDir(dir);
    let error: unknown;
    try {
      lockStateDir(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StateDirLockedError);
    expect((error as StateDirLockedError).code).toBe("CONFLICT");
    expect((error as Error).message).toContain(`in use by another warden serve (pid ${process.pid} on `);
    expect((error as Error).message).toContain("'stateDir'");
    first.release();
    expect(await readdir(dir)).toEqual([]);
    lockStateDir(dir).release();
  });

  it("a lock left by a dead process (kill -9) is taken over", async () => {
    await writeFile(join(dir, "serve.lock"), `${deadPid()}\n\n`);
    const lock = lockStateDir(dir);
    expect((await readFile(join(dir, "serve.lock"), "utf8")).split("\n")[0]).toBe(String(process.pid));
    lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it("a lock whose pid now belongs to another process (other start time) is taken over", async () => {
    const start = processStartTime(process.pid);
    expect(start).not.toBe("");
    await writeFile(join(dir, "serve.lock"), `${process.pid}\n${Number(start) - 1}\n`);
    lockStateDir(dir).release();
  });

  it("release removes only its own lock, not a later holder's", async () => {
    const lock = lockStateDir(dir);
    await writeFile(join(dir, "serve.lock"), `${process.pid}\n${processStartTime(process.pid)}\nlater\n`);
    lock.release();
    expect(await readdir(dir)).toEqual(["serve.lock"]);
  });

  it("a second server on the same state dir fails with the pid and reconciles nothing", async () => {
    const backend = new FakeBackend();
    const config = testConfig(dir);
    const first = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
    const created = await first.app.inject({
      method: "POST",
      url: "/v1/sessions",
      headers: auth("alpha"),
      payload: {},
    });
    const before = [...backend.containers.keys()];
    const audit = createMemoryAuditLog();
    await expect(startServer({ config, ...serverParts(), audit, listen: false })).rejects.toThrow(
      `pid ${process.pid}`,
    );
    expect(audit.entries).toEqual([]);
    expect([...backend.containers.keys()]).toEqual(before);
    expect(created.statusCode).toBe(201);
    await first.shutdown(0);
  });

  it("the port is bound before reconciling; requests get 503 STARTING until it is done", async () => {
    const probe = await loopbackListener();
    const port = probe.port;
    await new Promise((r) => probe.server.close(r));
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const backend = new FakeBackend();
    const list = backend.listContainers.bind(backend);
    backend.listContainers = async (tenants) => {
      await gate;
      return list(tenants);
    };
    const starting = startServer({
      config: { ...testConfig(dir), port },
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
    });
    let res: Response | undefined;
    while (!res) {
      res = await fetch(`http://127.0.0.1:${port}/v1/sessions`, { headers: auth("alpha") }).catch(
        () => undefined,
      );
      if (!res) await new Promise((r) => setTimeout(r, 50));
    }
    if (!res) throw new Error("the server never accepted a connection while reconciling");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { code: string }).code).toBe("STARTING");
    open();
    const server = await starting;
    const after = await fetch(`http://127.0.0.1:${port}/v1/sessions`, { headers: auth("alpha") });
    expect(after.status).toBe(200);
    await server.shutdown(0);
  });

  it("a port in use fails naming host:port and the config field, before reconciling", async () => {
    const { server: blocker, port } = await loopbackListener();
    try {
      const backend = new FakeBackend();
      // An orphan a reconcile would remove.
      backend.containers.set("orphan-1", {
        containerId: "orphan-1",
        sessionId: "orphan-session",
        tenant: "alpha",
        controller: "elsewhere:1",
        running: true,
      });
      const audit = createMemoryAuditLog();
      const config = { ...testConfig(dir), port };
      let error: unknown;
      await startServer({ config, ...serverParts(backend), audit }).catch((err: unknown) => {
        error = err;
      });
      expect(error).toBeInstanceOf(AddressInUseError);
      expect((error as Error).message).toBe(
        `Cannot listen on 127.0.0.1:${port}: the address is in use by another process. ` +
          "Stop that process, or set another 'port' (or 'host') in the config or pass --port.",
      );
      expect([...backend.containers.keys()]).toEqual(["orphan-1"]);
      expect(audit.entries).toEqual([]);
      // The lock was released: the state dir can be used at once.
      lockStateDir(dir).release();
    } finally {
      blocker.close();
    }
  });
});
