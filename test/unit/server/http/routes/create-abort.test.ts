import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../../../src/server/server.js";
import type { SessionOptions } from "../../../../../src/session/index.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../../helpers/server-fakes.js";

/**
 * A backend whose creates wait, as a cold container or Pod does, until `release()`: the test
 * decides when a create ends, not a delay a loaded host could outlast. `creating` counts creates begun.
 */
class SlowBackend extends FakeBackend {
  creating = 0;
  release: () => void = () => {};
  private readonly released = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  override async create(options: SessionOptions) {
    this.creating++;
    await this.released;
    return super.create(options);
  }
}

describe("warden serve: a create the client aborted", () => {
  let dir: string;
  let server: RunningServer;
  let backend: SlowBackend;
  let audit: ReturnType<typeof createMemoryAuditLog>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-abort-"));
    backend = new SlowBackend();
    audit = createMemoryAuditLog();
    const config = testConfig(join(dir, "state"), [tenant("alpha")]);
    server = await startServer({ config, ...serverParts(backend), audit, listen: true });
  });

  afterEach(async () => {
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  it("closes the session it made: none is left holding a maxSessions slot", async () => {
    const req = httpRequest(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { ...auth("alpha"), "content-type": "application/json" },
    });
    req.on("error", () => {}); // the abort below
    req.end("{}");
    await expect.poll(() => backend.creating).toBe(1);
    req.destroy();
    // The server saw the connection close (its socket's close ends the answer too).
    const connections = async () => (await server.ctx.metrics.connections.get()).values[0]?.value;
    await expect.poll(connections).toBe(0);
    // The create finishes after the client left; its session is then closed.
    backend.release();
    const closedAudited = () => audit.entries.some((e) => e.kind === "session" && e.event === "closed");
    await expect.poll(closedAudited).toBe(true);
    const list = await fetch(`${server.url}/v1/sessions`, { headers: auth("alpha") });
    const closed = audit.entries.filter((e) => e.kind === "session" && e.event === "closed");
    expect({
      created: backend.sessions.length,
      closed: backend.sessions.filter((s) => s.closed).length,
      listed: ((await list.json()) as { sessions: unknown[] }).sessions.length,
      reasons: closed.map((e) => (e as { reason?: string }).reason),
    }).toEqual({
      created: 1,
      closed: 1,
      listed: 0,
      reasons: ["client went away before the create answered"],
    });
  });

  it("answers a client that waits as before (201)", async () => {
    const answer = fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { ...auth("alpha"), "content-type": "application/json" },
      body: "{}",
    });
    await expect.poll(() => backend.creating).toBe(1);
    backend.release();
    const res = await answer;
    expect(res.status).toBe(201);
    expect(backend.sessions.filter((s) => s.closed)).toHaveLength(0);
  });
});
