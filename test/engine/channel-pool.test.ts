/** The warm pool on Docker: hardened pre-started containers per key, claims with the workspace copied in, drained with nothing left. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dockerPoolBackend, POOL_LABEL, type PoolRequest, WarmPool } from "../../src/pool/index.js";
import { getDocker, LABEL } from "../../src/sandbox/index.js";
import type { PreparedSandbox } from "../../src/sandbox/prepare.js";
import { describeEngine } from "../helpers/engine.js";
import { channelTenant } from "./channel-fixture.js";
import { leftovers, run } from "./sandbox-fixture.js";

const poolTenant = channelTenant("pool");
const claimTenant = channelTenant("claim");

describeEngine("warm pool on Docker", () => {
  let dir: string;
  let pool: WarmPool<PoolRequest, PreparedSandbox>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-pool-"));
    await writeFile(join(dir, "hello.txt"), "from the host\n");
    pool = new WarmPool({ backend: dockerPoolBackend({ tenant: poolTenant }), size: 2 });
  });
  afterAll(async () => {
    await pool?.drain();
    await rm(dir, { recursive: true, force: true });
    expect(await leftovers(poolTenant)).toEqual([]);
    expect(await leftovers(claimTenant)).toEqual([]);
  });

  it("keeps `size` hardened, labelled containers per key, started with the helper", async () => {
    await pool.warm({ workspace: { hostPath: dir } });
    await pool.settled();
    expect(pool.stats().map((s) => [s.idle, s.size])).toEqual([[2, 2]]);
    const docker = getDocker();
    const idle = await docker.listContainers({ filters: { label: [`${LABEL.tenant}=${poolTenant}`] } });
    expect(idle).toHaveLength(2);
    for (const c of idle) {
      expect(c.Labels[POOL_LABEL]).toMatch(/^sha256:[0-9a-f]{64}$/);
      const info = await docker.getContainer(c.Id).inspect();
      expect(info.HostConfig).toMatchObject({
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        NetworkMode: "none",
        // The helper is PID 1 itself: docker-init would hold the attach pipes (channel-forgery.test.ts).
        Init: false,
      });
      expect(info.Path).toBe("/usr/local/bin/warden-helper");
    }
  });

  it("claims one with the workspace copied in, as the claimer's session, and refills", async () => {
    const claimed = await pool.claim({
      workspace: { hostPath: dir },
      tenant: claimTenant,
      sessionId: "test-claimed-1",
    });
    await using sb = claimed.sandbox;
    expect(claimed.pooled).toBe(true);
    expect(sb.info).toMatchObject({ sessionId: "test-claimed-1", tenant: claimTenant, execPath: "channel" });
    expect((await run(sb, "cat hello.txt; stat -c %u hello.txt")).stdout).toBe("from the host\n1000\n");
    await pool.settled();
    expect(pool.stats()[0]).toMatchObject({ idle: 2 });
  });

  it("never hands over a container prepared for another policy or limits", async () => {
    const other = await pool.claim({
      workspace: { hostPath: dir },
      tenant: claimTenant,
      policyHash: "strict-v2",
    });
    await using sb = other.sandbox;
    expect(other.pooled).toBe(false);
    const limited = await pool.claim({
      workspace: { hostPath: dir },
      tenant: claimTenant,
      limits: { pids: 64 },
    });
    await using sb2 = limited.sandbox;
    expect(limited.pooled).toBe(false);
    expect((await getDocker().getContainer(sb2.info.containerId).inspect()).HostConfig.PidsLimit).toBe(64);
    expect(sb.info.tenant).toBe(claimTenant);
  });

  it("drains: every idle container and volume is removed", async () => {
    await pool.settled();
    await pool.drain();
    expect(await leftovers(poolTenant)).toEqual([]);
  });
});
