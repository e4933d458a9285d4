/**
 * `warden serve` with its default warm pool (1 idle sandbox per key): after a tenant's first
 * session the pool holds a hardened spare labelled with that tenant, the next session is claimed
 * from it (workspace copied in), a `kill -9` leaves the spare as an orphan that the restart
 * removes while the pooled session is adopted, and SIGTERM leaves no container at all.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { POOL_LABEL } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  tenantClient,
  tenantContainers,
  writeServeConfig,
} from "../../helpers/server-fixture.js";

const TENANT = `test-pool-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;
const SESSION_LABEL = "io.warden.session";

describeEngine("warden serve: warm pool", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];

  const { api, bashText: bash } = tenantClient(KEY);
  const createSession = async (s: ServeChild, workspaceMode = "copy"): Promise<string> => {
    const res = await api(s, "/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ workspacePath: join(dir, "ws"), workspaceMode }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  /** Waits until the server reports `count` idle spares ready (prepared, not just created). */
  const waitForSpares = (s: ServeChild, count: number) =>
    expect
      .poll(
        async () =>
          (await (await fetch(`${s.url}/metrics`)).text()).match(/^warden_pool_idle_sandboxes (\d+)$/m)?.[1],
        {
          timeout: 30_000,
          interval: 100,
        },
      )
      .toBe(String(count));
  /** Waits until the tenant has `count` running containers (sessions plus idle spares). */
  const waitForContainers = (count: number) =>
    expect
      .poll(async () => (await tenantContainers(TENANT)).length, { timeout: 30_000, interval: 100 })
      .toBe(count);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-serve-pool-"));
    await mkdir(join(dir, "ws"));
    await writeFile(join(dir, "ws", "seed.txt"), "seeded\n");
    main = await bundleCli();
    config = await writeServeConfig(dir, TENANT, KEY, { tenant: { workspaceRoots: ["."] } });
  });

  afterAll(() => cleanUpServe(children, TENANT, dir, main));

  it("claims sessions from the pool, and recovers them after kill -9 with no orphan", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    expect(await tenantContainers(TENANT)).toEqual([]);
    const cold = await createSession(first);
    // The first session of a key is a cold start; the pool then keeps one spare for the key.
    await waitForSpares(first, 1);
    await waitForContainers(2);
    const spare = (await tenantContainers(TENANT)).find((c) => c.Labels[SESSION_LABEL] !== cold)!;
    expect(spare.Labels[SESSION_LABEL]).toMatch(/^pool-/);
    expect(spare.Labels[POOL_LABEL]).toMatch(/^sha256:[0-9a-f]{64}$/);

    const pooled = await createSession(first);
    const containers = await tenantContainers(TENANT);
    expect(containers.some((c) => c.Id === spare.Id && c.State === "running")).toBe(true);
    const view = (await (await api(first, `/v1/sessions/${pooled}`)).json()) as { containerId: string };
    expect(view.containerId).toBe(spare.Id);
    // The spare got its own uid when it was made (its label); the session runs as that uid.
    expect(Number(spare.Labels["io.warden.uid"])).toBeGreaterThanOrEqual(2 ** 20);
    expect(await bash(first, pooled, "cat seed.txt; id -u; echo kept > mark.txt")).toBe(
      `seeded\n${spare.Labels["io.warden.uid"]}\n`,
    );
    await waitForSpares(first, 1);
    await waitForContainers(3);
    // A bind-mounted (ro/rw) workspace never comes from the pool: a spare would mount the host path
    // long after it was checked. It starts cold and gets no spare.
    const bound = await createSession(first, "ro");
    const boundRecord = JSON.parse(await readFile(join(dir, "state", "sessions", `${bound}.json`), "utf8"));
    expect(
      (await tenantContainers(TENANT)).find((c) => c.Id === boundRecord.containerId)?.Labels[SESSION_LABEL],
    ).toBe(bound);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await tenantContainers(TENANT)).toHaveLength(4);
    const metrics = await (await fetch(`${first.url}/metrics`)).text();
    expect(metrics).toContain('warden_sandbox_starts_total{source="cold"} 2\n');
    expect(metrics).toContain('warden_sandbox_starts_total{source="pool"} 1\n');

    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    // The sessions adopted; the spare the dead server kept idle is its orphan.
    expect(second.stderr()).toContain("warden serve: adopted 3, dropped 0, removed 1 orphan(s)");
    expect(await bash(second, pooled, "cat mark.txt")).toBe("kept\n");
    expect((await tenantContainers(TENANT)).map((c) => c.Id).sort()).toEqual(
      containers
        .filter((c) => c.Labels[SESSION_LABEL] === cold || c.Id === spare.Id)
        .map((c) => c.Id)
        .concat(boundRecord.containerId)
        .sort(),
    );

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(second.stderr()).toContain("warden serve: stopped; 3 session(s) closed, 0 spare(s) removed\n");
    expect(await tenantContainers(TENANT)).toEqual([]);
  });
});
