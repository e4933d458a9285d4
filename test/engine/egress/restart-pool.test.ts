/**
 * `warden serve` with `warmPool.networked`: a session with network claimed from the warm pool
 * keeps its spare's `pool-<uuid>` label on its sandbox and gateway; after a `kill -9` and a
 * restart it is adopted with its gateway (found by that label, not swept as another session's),
 * its connections are audited under its own id again, and the spare idle at the crash is removed
 * with its gateway and network.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { expect, it } from "vitest";
import { getDocker, LABEL, POOL_LABEL } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { type ServeChild, spawnServe, tenantClient, writeServeConfig } from "../../helpers/server-fixture.js";
import { networkAuditLines } from "./client.js";
import { useEgressServe } from "./serve-fixture.js";
import { egressOf } from "./testbed.js";

const TENANT = `test-egress-pool-restart-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;
const FETCH = `python3 -c "import urllib.request as u; print(u.urlopen('https://allowed.test/hello', timeout=8).read().decode().strip())"`;

describeEngine("warden serve: a session with network from the warm pool, kill -9 and restart", () => {
  const serve = useEgressServe(TENANT, "warden-egress-pool-restart-");
  const { children } = serve;
  const { api, bashText } = tenantClient(KEY);
  const docker = getDocker();
  /** The tenant's containers made as spares, claimed or not: their `io.warden.session` labels. */
  const spares = async () =>
    (await docker.listContainers({ filters: { label: [`${LABEL.tenant}=${TENANT}`, POOL_LABEL] } }))
      .map((c) => c.Labels[LABEL.session] ?? "")
      .sort();
  /** The `io.warden.session` label of session `id`'s sandbox. */
  const labelOf = async (s: ServeChild, id: string) => {
    const { containerId } = (await (await api(s, `/v1/sessions/${id}`)).json()) as { containerId: string };
    return (await docker.getContainer(containerId).inspect()).Config.Labels[LABEL.session] ?? "";
  };

  it("adopts the pooled session with its gateway and removes the idle spare's", async () => {
    const [bed, dir, main] = [serve.bed(), serve.dir(), serve.main()];
    const config = await writeServeConfig(dir, TENANT, KEY, {
      server: { warmPool: { size: 1, networked: 1 } },
      tenant: {
        network: {
          allow: ["allowed.test:443"],
          egressNetworks: [bed.publicNetwork],
          caBundle: bed.caBundlePath,
        },
      },
    });
    const first = await spawnServe(main, config);
    children.push(first);
    const create = async () => {
      const res = await api(first, "/v1/sessions", {
        method: "POST",
        body: JSON.stringify({ network: { allow: ["allowed.test:443"] } }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    /** The server's idle spares, from its metrics (a spare still starting is not one yet). */
    const idleSpares = async () => {
      const metrics = await (await fetch(`${first.url}/metrics`)).text();
      return Number(/^warden_pool_idle_sandboxes (\d+)$/m.exec(metrics)?.[1]);
    };
    const cold = await create();
    await expect.poll(idleSpares, { timeout: 60_000 }).toBe(1);
    const [spare] = await spares();
    const pooled = await create();
    expect(await labelOf(first, pooled)).toBe(spare);
    expect(await bashText(first, pooled, FETCH)).toBe("hello from public as allowed.test\n");
    // The key refills: a new idle spare, with its own gateway and network, is there at the crash
    // (a claimed spare keeps its pool label too).
    await expect.poll(idleSpares, { timeout: 60_000 }).toBe(1);
    const idle = (await spares()).find((label) => label !== spare);
    expect(await egressOf(idle as string)).toEqual(["gateway", "network"]);

    first.child.kill("SIGKILL");
    await first.exited;
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    expect(second.stderr()).toContain("warden serve: adopted 2, dropped 0, removed 1 orphan(s)");
    expect(await egressOf(spare as string)).toEqual(["gateway", "network"]);
    expect(await egressOf(idle as string)).toEqual([]);
    expect(await bashText(second, pooled, FETCH)).toBe("hello from public as allowed.test\n");
    expect(await bashText(second, cold, FETCH)).toBe("hello from public as allowed.test\n");
    const tunnels = async () =>
      (await networkAuditLines(join(dir, "state", "audit.jsonl")))
        .filter((a) => !a.insideTunnel)
        .map((a) => a.session)
        .sort();
    await expect.poll(tunnels).toEqual([cold, pooled, pooled].sort());

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(await egressOf(spare as string)).toEqual([]);
  }, 300_000);
});
