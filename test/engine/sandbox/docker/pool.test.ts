/** The warm pool on Docker: hardened pre-started containers per key, claims with the workspace copied in, drained with nothing left. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { PreparedSandbox } from "../../../../src/sandbox/docker/prepare.js";
import {
  dockerPoolBackend,
  getDocker,
  LABEL,
  POOL_LABEL,
  type PoolRequest,
  WarmPool,
} from "../../../../src/sandbox/index.js";
import { channelTenant } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers, run } from "../../../helpers/sandbox-fixture.js";

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
    await pool.warm({ template: {}, claim: { workspace: { hostPath: dir } } });
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
      // The execute-only copy: non-dumpable from its execve (docs/security.md).
      expect(info.Path).toBe("/usr/local/libexec/warden/warden-helper");
    }
  });

  it("claims one with the workspace copied in, as the claimer's session, and refills", async () => {
    const claimed = await pool.claim({
      template: {},
      claim: { workspace: { hostPath: dir }, sessionId: "test-claimed-1" },
    });
    await using sb = claimed.sandbox;
    expect(claimed.pooled).toBe(true);
    expect(sb.info).toMatchObject({ sessionId: "test-claimed-1", tenant: poolTenant, execPath: "channel" });
    // Owned by the spare's own uid (each sandbox has one: src/sandbox/sandbox-uid.ts), never root.
    expect(sb.info.uid).toBeGreaterThanOrEqual(2 ** 20);
    expect((await run(sb, "cat hello.txt; stat -c %u hello.txt")).stdout).toBe(
      `from the host\n${sb.info.uid}\n`,
    );
    await pool.settled();
    expect(pool.stats()[0]).toMatchObject({ idle: 2 });
  });

  it("never hands over a container prepared for another tenant, policy or limits", async () => {
    const otherTenant = await pool.claim({
      template: { tenant: claimTenant },
      claim: { workspace: { hostPath: dir } },
    });
    await using sb0 = otherTenant.sandbox;
    expect(otherTenant.pooled).toBe(false);
    const labels = (await getDocker().getContainer(sb0.info.containerId).inspect()).Config.Labels;
    expect(labels[LABEL.tenant]).toBe(claimTenant);
    const other = await pool.claim({
      template: { tenant: claimTenant },
      claim: { workspace: { hostPath: dir } },
      policyHash: "strict-v2",
    });
    await using sb = other.sandbox;
    expect(other.pooled).toBe(false);
    const limited = await pool.claim({
      template: { tenant: claimTenant, limits: { pids: 64 } },
      claim: { workspace: { hostPath: dir } },
    });
    await using sb2 = limited.sandbox;
    expect(limited.pooled).toBe(false);
    expect((await getDocker().getContainer(sb2.info.containerId).inspect()).HostConfig.PidsLimit).toBe(64);
    expect(sb.info.tenant).toBe(claimTenant);
  });

  it("keeps refilling a key after the workspace of its first claim is gone (uploaded dirs are removed)", async () => {
    const gone = await mkdtemp(join(tmpdir(), "warden-pool-gone-"));
    const first = await pool.claim({
      template: {},
      claim: { workspace: { hostPath: gone } },
      policyHash: "refill",
    });
    await first.sandbox.destroy();
    await pool.settled();
    await rm(gone, { recursive: true });
    const second = await pool.claim({
      template: {},
      claim: { workspace: { hostPath: dir } },
      policyHash: "refill",
    });
    await using sb = second.sandbox;
    expect(second.pooled).toBe(true);
    await pool.settled();
    const key = await dockerPoolBackend({ tenant: poolTenant }).keyOf({ template: {}, policyHash: "refill" });
    expect(pool.stats().find((s) => s.key === key)).toMatchObject({ idle: 2, filling: 0 });
    expect((await run(sb, "cat hello.txt")).stdout).toBe("from the host\n");
  });

  it("does not hand over a spare whose processes were stopped: its ping fails, the claim goes cold", async () => {
    const request = { template: {}, claim: { workspace: { hostPath: dir } }, policyHash: "stopped" };
    await pool.warm(request);
    await pool.settled();
    const key = await dockerPoolBackend({ tenant: poolTenant }).keyOf(request);
    const docker = getDocker();
    const spares = await docker.listContainers({ filters: { label: [`${POOL_LABEL}=${key.slice(0, 71)}`] } });
    expect(spares).toHaveLength(2);
    for (const c of spares) {
      // As an operator's `docker exec <spare> kill -STOP -1` (or a host event) would.
      const container = docker.getContainer(c.Id);
      const user = (await container.inspect()).Config.User;
      const exec = await container.exec({ Cmd: ["sh", "-c", "kill -STOP -1"], User: user });
      await exec.start({ hijack: false, stdin: false });
      // Until the kill has run: before the exec starts, inspect says not Running too (ExitCode null),
      // and a claim made then got a spare that was not stopped yet (CI, 2026-12-03).
      while ((await exec.inspect()).ExitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect((await exec.inspect()).ExitCode).toBe(0);
    }
    const claimed = await pool.claim(request);
    await using sb = claimed.sandbox;
    // One 10 s ping at most (RETRY_SPARE_WITHIN_MS), then a cold container: not a hanging session.
    expect(claimed.pooled).toBe(false);
    expect((await run(sb, "cat hello.txt")).stdout).toBe("from the host\n");
  });

  it("drains: every idle container and volume is removed", async () => {
    await pool.settled();
    await pool.drain();
    expect(await leftovers(poolTenant)).toEqual([]);
  });
});
