/**
 * `warden serve`'s bound on sessions with network egress against the real engine (attack 37 F3):
 * each such session takes one network from the engine's address pools, so the server refuses the
 * next one once a tenant holds its quotas.maxNetworkedSessions (429) or the server its
 * maxNetworkedSessions (503 NO_ROOM), both with Retry-After, and a refused create leaves no gateway,
 * network or container behind. The caps here are small (2 server-wide): the test never exhausts the
 * shared engine's pools, whose own error is classified by test/unit/server/http/error-response.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROLE_LABEL } from "../../../src/egress/index.js";
import { getDocker, LABEL } from "../../../src/sandbox/index.js";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import type { RunningServer } from "../../../src/server/server.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import { removeTenant, startTestServer, testQuotas } from "../../helpers/server-fixture.js";

const tenantA = `test-egress-cap-a-${process.pid}`;
const tenantB = `test-egress-cap-b-${process.pid}`;
const KEYS = { [tenantA]: "egress-cap-key-a", [tenantB]: "egress-cap-key-b" };

/** The tenant's gateways, egress networks and sandboxes on the engine, as counts. */
async function engineObjects(tenant: string) {
  const docker = getDocker();
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL.tenant}=${tenant}`] },
  });
  const networks = await docker.listNetworks({
    filters: { label: [`${ROLE_LABEL}=network`, `${LABEL.tenant}=${tenant}`] },
  });
  const gateways = containers.filter((c) => c.Labels[ROLE_LABEL] === "gateway").length;
  return { gateways, networks: networks.length, sandboxes: containers.length - gateways };
}

describeEngine("warden serve: sessions with network egress are bounded before the engine runs out", () => {
  let server: RunningServer;
  let dir: string;
  const created: [string, string][] = [];
  const post = (tenant: string) =>
    fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
      body: JSON.stringify({ network: { allow: ["allowed.test:443"] } }),
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-egress-cap-"));
    const tenant = (id: string, maxNetworkedSessions: number) => ({
      id,
      keys: [{ id: "k", sha256: hashKey(KEYS[id] ?? "") }],
      quotas: { ...testQuotas(4), maxNetworkedSessions },
      // The gateway's egress network is the engine's default bridge: no test host is reached here.
      network: { allow: ["allowed.test:443"] },
    });
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        warmPool: { size: 0 },
        maxNetworkedSessions: 2,
        tenants: [tenant(tenantA, 1), tenant(tenantB, 2)],
      },
      dir,
    );
    server = await startTestServer(config);
  }, 60_000);

  afterAll(async () => {
    for (const [tenant, id] of created)
      await fetch(`${server.url}/v1/sessions/${id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${KEYS[tenant]}` },
      }).catch(() => undefined);
    await server?.shutdown(0);
    await removeTenant(tenantA);
    await removeTenant(tenantB);
    if (dir) await rm(dir, { recursive: true, force: true });
    expect(await engineObjects(tenantA)).toEqual({ gateways: 0, networks: 0, sandboxes: 0 });
    expect(await engineObjects(tenantB)).toEqual({ gateways: 0, networks: 0, sandboxes: 0 });
  });

  it("refuses the tenant over its cap (429) and the server over its cap (503 NO_ROOM), leaving nothing behind", async () => {
    const a = await post(tenantA);
    expect(a.status).toBe(201);
    created.push([tenantA, ((await a.json()) as { id: string }).id]);
    expect(await engineObjects(tenantA)).toEqual({ gateways: 1, networks: 1, sandboxes: 1 });

    const overTenant = await post(tenantA);
    expect(overTenant.status).toBe(429);
    expect(overTenant.headers.get("retry-after")).toBe("1");
    expect(((await overTenant.json()) as { code: string }).code).toBe("RATE_LIMITED");
    expect(await engineObjects(tenantA)).toEqual({ gateways: 1, networks: 1, sandboxes: 1 });

    const b = await post(tenantB);
    expect(b.status).toBe(201);
    created.push([tenantB, ((await b.json()) as { id: string }).id]);

    const overServer = await post(tenantB);
    expect(overServer.status).toBe(503);
    expect(overServer.headers.get("retry-after")).toBe("10");
    const body = (await overServer.json()) as { code: string; message: string };
    expect(body.code).toBe("NO_ROOM");
    expect(body.message).toContain(
      "The server has 2 sessions with network egress (its maxNetworkedSessions)",
    );
    expect(await engineObjects(tenantB)).toEqual({ gateways: 1, networks: 1, sandboxes: 1 });

    // Closing one gives its slot back: the next networked create of tenant B goes through.
    const [, idA] = created.shift() ?? [];
    const del = await fetch(`${server.url}/v1/sessions/${idA}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${KEYS[tenantA]}` },
    });
    expect(del.status).toBe(204);
    expect(await engineObjects(tenantA)).toEqual({ gateways: 0, networks: 0, sandboxes: 0 });
    const again = await post(tenantB);
    expect(again.status).toBe(201);
    created.push([tenantB, ((await again.json()) as { id: string }).id]);
    expect(await engineObjects(tenantB)).toEqual({ gateways: 2, networks: 2, sandboxes: 2 });
  }, 120_000);
});
