/**
 * GET /v1/sessions/:id/workspace and /changes take one of the tenant's maxConcurrentWorkspaceReads
 * slots until their response is over (red team: one tenant's parallel /changes requests, each
 * holding its files and patch in memory, took the server to 1.3 GB with 8 requests, unbounded).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WorkspaceChange } from "../../../../../src/sandbox/types.js";
import {
  DEFAULT_MAX_CONCURRENT_WORKSPACE_READS,
  resolveServerConfig,
  tenantOf,
} from "../../../../../src/server/config/index.js";
import { holdReadSlot } from "../../../../../src/server/http/routes/workspace.js";
import { type RunningServer, startServer } from "../../../../../src/server/server.js";
import {
  auth,
  FakeBackend,
  serverParts,
  type TOKENS,
  tenant,
  testConfig,
} from "../../../../helpers/server-fakes.js";

describe("warden serve: workspace reads within maxConcurrentWorkspaceReads", () => {
  let dir: string;
  let server: RunningServer;
  let backend: FakeBackend;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-reads-"));
    backend = new FakeBackend();
    const alpha = tenant("alpha", { quotas: { ...tenant("alpha").quotas, maxConcurrentWorkspaceReads: 1 } });
    server = await startServer({
      config: testConfig(dir, [alpha, tenant("beta")]),
      ...serverParts(backend),
      listen: true,
    });
  });

  afterEach(async () => {
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  const get = (who: keyof typeof TOKENS, path: string) =>
    fetch(`${server.url}${path}`, { headers: auth(who) });
  const create = async (who: keyof typeof TOKENS): Promise<string> => {
    const res = await fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { ...auth(who), "content-type": "application/json" },
      body: "{}",
    });
    return ((await res.json()) as { id: string }).id;
  };

  it("refuses a second read of the tenant with 429 naming the quota, until the first is over; other tenants are not counted", async () => {
    const a = await create("alpha");
    const b = await create("beta");
    // The first review waits in changedPaths until released: it holds alpha's only slot.
    let finish!: (changes: WorkspaceChange[]) => void;
    const sandbox = backend.sessions[0]!.sandbox;
    sandbox.changedPaths = () => new Promise((resolve) => (finish = resolve));
    const first = get("alpha", `/v1/sessions/${a}/changes`);
    await expect.poll(() => finish !== undefined).toBe(true);

    const refused = await get("alpha", `/v1/sessions/${a}/workspace`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe("RATE_LIMITED");
    expect(body.message).toBe(
      "Tenant 'alpha' has 1 workspace exports or reviews running (its maxConcurrentWorkspaceReads); retry after one finishes.",
    );
    expect((await get("alpha", `/v1/sessions/${a}/changes`)).status).toBe(429);
    expect((await get("beta", `/v1/sessions/${b}/changes`)).status).toBe(200);

    finish([{ path: "b.txt", kind: "added" }]);
    const done = await first;
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("+++ b/b.txt");
    // The slot is free again once the first response is over; an export holds it while it streams.
    const exported = await get("alpha", `/v1/sessions/${a}/workspace`);
    expect(exported.status).toBe(200);
    await exported.arrayBuffer();
    expect(server.ctx.quotas.workspaceReadsInFlight("alpha")).toBe(0);
  });

  it("a response already closed when the handler starts (client gone during the hooks) keeps no slot", () => {
    // Its `close` was emitted before the handler could listen: waiting for it held the slot forever.
    const alpha = tenantOf(server.ctx.config, "alpha")!;
    const listeners: string[] = [];
    const gone = {
      destroyed: true,
      once: (event: string) => listeners.push(event),
      removeListener: () => {},
    };
    holdReadSlot(server.ctx.quotas, alpha, gone as never);
    expect(server.ctx.quotas.workspaceReadsInFlight("alpha")).toBe(0);
    const open = {
      destroyed: false,
      once: (event: string) => listeners.push(event),
      removeListener: () => {},
    };
    holdReadSlot(server.ctx.quotas, alpha, open as never);
    expect(server.ctx.quotas.workspaceReadsInFlight("alpha")).toBe(1);
    expect(listeners).toEqual(["close"]);
  });

  it("a refused read (unknown session) takes no slot", async () => {
    expect((await get("alpha", "/v1/sessions/nope/changes")).status).toBe(404);
    expect(server.ctx.quotas.workspaceReadsInFlight("alpha")).toBe(0);
  });

  it("defaults to 2 per tenant", () => {
    const { maxConcurrentWorkspaceReads: _, ...quotas } = tenant("alpha").quotas;
    const cfg = resolveServerConfig(
      { tenants: [{ id: "t1", keys: [{ id: "k", sha256: "0".repeat(64) }], quotas }] },
      "/",
      "c.yaml",
    );
    expect(DEFAULT_MAX_CONCURRENT_WORKSPACE_READS).toBe(2);
    expect(cfg.tenants[0]?.quotas.maxConcurrentWorkspaceReads).toBe(2);
  });
});
