/**
 * `warden serve`'s bound on sessions with network egress (src/server/tenancy/network-slots.ts, attack 37
 * F3): each takes one of the engine's address pools, so a tenant past its quotas.maxNetworkedSessions
 * is refused 429 and the server past maxNetworkedSessions 503 NO_ROOM, both with Retry-After and
 * before the backend creates anything; a closed session gives its slot back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import { resolveServerConfig, resolveTenantNetwork } from "../../../../src/server/config/index.js";
import { type RunningServer, startServer } from "../../../../src/server/server.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../helpers/server-fakes.js";

const network = resolveTenantNetwork({ allow: ["pypi.org:443"] }, "/etc/warden", "config.json: /tenants/0");

describe("warden serve: sessions with network egress are bounded per tenant and server-wide", () => {
  let dir: string;
  let server: RunningServer;
  let backend: FakeBackend;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-netslots-"));
    backend = new FakeBackend();
    const quotas = (id: "alpha" | "beta") => ({
      ...tenant(id).quotas,
      maxSessions: 5,
      maxNetworkedSessions: 2,
    });
    const config = {
      ...testConfig(join(dir, "state"), [
        tenant("alpha", { network, quotas: quotas("alpha") }),
        tenant("beta", { network, quotas: quotas("beta") }),
      ]),
      maxNetworkedSessions: 3,
    };
    server = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
  });

  afterEach(async () => {
    await server.shutdown(0);
    await rm(dir, { recursive: true, force: true });
  });

  const post = (who: "alpha" | "beta", networked = true) =>
    server.app.inject({
      method: "POST",
      url: "/v1/sessions",
      headers: auth(who),
      payload: networked ? { network: { allow: ["pypi.org:443"] } } : {},
    });

  it("refuses a tenant over its own cap with 429 and the server over its cap with 503, creating nothing", async () => {
    expect((await post("alpha")).statusCode).toBe(201);
    expect((await post("alpha")).statusCode).toBe(201);
    const overTenant = await post("alpha");
    expect(overTenant.statusCode).toBe(429);
    expect(overTenant.headers["retry-after"]).toBe("1");
    expect(overTenant.json()).toEqual({
      code: "RATE_LIMITED",
      message:
        "Tenant 'alpha' has 2 sessions with network egress (its quotas.maxNetworkedSessions); close one first, or create the session without network.",
    });
    // Sessions without network take no slot.
    expect((await post("alpha", false)).statusCode).toBe(201);
    expect((await post("beta")).statusCode).toBe(201);
    const overServer = await post("beta");
    expect(overServer.statusCode).toBe(503);
    expect(overServer.headers["retry-after"]).toBe("10");
    expect(overServer.json()).toEqual({
      code: "NO_ROOM",
      message:
        "The server has 3 sessions with network egress (its maxNetworkedSessions): each takes one network from the Docker engine's address pools, so no more are started. " +
        "Create the session without network, or raise maxNetworkedSessions together with the engine's pools (default-address-pools in daemon.json). " +
        "Retry in 10 s (Retry-After).",
    });
    // The refusals reached no backend: four sessions, four creates.
    expect(backend.created.length).toBe(4);
    expect(backend.created.filter((o) => o.sandbox?.network).length).toBe(3);
    const metrics = await server.app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toContain(
      'warden_rate_limited_total{tenant="alpha",quota="maxNetworkedSessions"} 1',
    );
  });

  it("gives the slot back when a networked session closes, or when its create fails", async () => {
    const first = (await post("alpha")).json() as { id: string };
    expect((await post("beta")).statusCode).toBe(201);
    expect((await post("beta")).statusCode).toBe(201);
    expect((await post("alpha")).statusCode).toBe(503);
    const del = await server.app.inject({
      method: "DELETE",
      url: `/v1/sessions/${first.id}`,
      headers: auth("alpha"),
    });
    expect(del.statusCode).toBe(204);
    // A create that fails in the backend holds no slot afterwards.
    const create = backend.create.bind(backend);
    backend.create = async () => {
      throw new Error("engine down");
    };
    expect((await post("alpha")).statusCode).toBe(500);
    backend.create = create;
    expect((await post("alpha")).statusCode).toBe(201);
  });

  it("defaults to 20 server-wide and 5 per tenant: under a default engine's 30 address pools", () => {
    const config = resolveServerConfig(
      {
        tenants: [
          {
            id: "acme",
            keys: [{ id: "k", sha256: "a".repeat(64) }],
            quotas: { maxSessions: 10, cpus: 1, memoryBytes: 1 << 28, workspaceBytes: 1 << 28 },
          },
        ],
      },
      dir,
    );
    expect(config.maxNetworkedSessions).toBe(20);
    expect(config.tenants[0]?.quotas.maxNetworkedSessions).toBe(5);
  });
});
