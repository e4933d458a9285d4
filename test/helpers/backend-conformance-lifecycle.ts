/**
 * The backend half of the conformance suite (backend-conformance.ts): specs beyond the backend's
 * capabilities refused, claim with and without a warm pool, list, remove, adopt, gc, poolStats,
 * close, and nothing left behind. Written against the SandboxBackend interface only.
 */
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { AdoptRequest, SandboxBackend } from "../../src/sandbox/backend.js";
import type { Sandbox, SandboxSpec } from "../../src/sandbox/types.js";
import type { ConformanceContext } from "./backend-conformance.js";

/** A warm pool of one spare per key; the spares outlive a default (24 h) session by an hour. */
const WARM_POOL = { size: 1, maxIdleMs: 10 * 60_000, ttlMs: 25 * 60 * 60_000 };

/** Specs asking for what `capabilities` lacks, each named by what it asks for (`what`). */
function beyondCapabilities(ctx: ConformanceContext): { what: string; spec: () => SandboxSpec }[] {
  const caps = ctx.target.capabilities;
  const cases: { what: string; spec: () => SandboxSpec }[] = [];
  for (const mode of ["ro", "rw"] as const)
    if (!caps.workspaceModes.includes(mode))
      cases.push({
        what: `a ${mode} workspace`,
        spec: () => ({ workspace: { hostPath: ctx.hostDir, mode } }),
      });
  if (!caps.mounts)
    cases.push({
      what: "a mount",
      spec: () => ({ mounts: [{ hostPath: ctx.hostDir, containerPath: "/extra" }] }),
    });
  if (!caps.networkModes.includes("allowlist"))
    cases.push({
      what: "an allowlist network",
      spec: () => ({
        network: { mode: "allowlist", rules: [{ host: "example.com", ports: [443], decision: "allow" }] },
      }),
    });
  if (!caps.runtimes.includes("runsc"))
    cases.push({ what: "runtime runsc", spec: () => ({ runtime: "runsc" }) });
  if (!caps.execPaths.includes("docker-exec"))
    cases.push({ what: "the docker-exec path", spec: () => ({ execPath: "docker-exec" }) });
  // Any backend: a value no backend has.
  cases.push({ what: "an unknown runtime", spec: () => ({ runtime: "bogus" as "runc" }) });
  return cases;
}

/** What the controller keeps of `sandbox` to adopt it after a restart (AdoptRequest), for list entry `id`. */
function adoptRequest(sandbox: Sandbox, id: string, hostDir: string): AdoptRequest {
  const { info } = sandbox;
  return {
    id,
    sessionId: info.sessionId,
    tenant: info.tenant,
    image: info.image,
    workspaceMode: info.workspaceMode,
    workspaceHostPath: hostDir,
    createdAt: info.createdAt,
    expiresAt: info.expiresAt,
  };
}

/** Registers the backend tests on `ctx` (its backend opened by the caller's beforeAll). */
export function conformanceLifecycle(ctx: ConformanceContext): void {
  it.each(beyondCapabilities(ctx).map((c) => [c.what, c]))(
    "create and claim refuse %s with INVALID_ARGUMENT, leaving nothing",
    async (_what, { spec }) => {
      const sessionId = `conf-${randomUUID()}`;
      const identity = { tenant: ctx.tenant, sessionId };
      const asked = { ...ctx.target.spec, ...spec() };
      await expect(ctx.backend.create(asked, identity)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(ctx.backend.claim(asked, identity)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await ctx.listed(sessionId)).toBeUndefined();
    },
  );

  it("claim without a warm pool starts a cold sandbox for the claimer's session", async () => {
    const sessionId = `conf-${randomUUID()}`;
    const claimed = await ctx.backend.claim(
      { ...ctx.target.spec, workspace: { hostPath: ctx.hostDir } },
      { tenant: ctx.tenant, sessionId },
    );
    ctx.track(claimed.sandbox);
    expect([claimed.pooled, claimed.sandbox.info.sessionId, claimed.sandbox.info.tenant]).toEqual([
      false,
      sessionId,
      ctx.tenant,
    ]);
    const seed = await claimed.sandbox.readFile("seed.txt", { kind: "bytes", offset: 0, length: 100 });
    expect(seed.data.toString()).toBe("seed\n");
    await claimed.sandbox.destroy();
  });

  it("claim with a warm pool: the first cold, the next a spare handed to the claimer's session; close drains it", async () => {
    const tenant = `${ctx.tenant}-pool`;
    const pooledBackend: SandboxBackend = await ctx.target.open({ warmPool: WARM_POOL });
    try {
      expect(pooledBackend.capabilities.warmPool).toBe(true);
      const spec = { ...ctx.target.spec, workspace: { hostPath: ctx.hostDir } };
      const first = await pooledBackend.claim(spec, { tenant, sessionId: `conf-${randomUUID()}` });
      ctx.track(first.sandbox);
      expect(first.pooled).toBe(false);
      await expect.poll(() => pooledBackend.poolStats().idle).toBe(1);
      const sessionId = `conf-${randomUUID()}`;
      const second = await pooledBackend.claim(spec, { tenant, sessionId });
      ctx.track(second.sandbox);
      expect([second.pooled, second.sandbox.info.sessionId, second.sandbox.info.tenant]).toEqual([
        true,
        sessionId,
        tenant,
      ]);
      const seed = await second.sandbox.readFile("seed.txt", { kind: "bytes", offset: 0, length: 100 });
      expect(seed.data.toString()).toBe("seed\n");
      expect((await second.sandbox.exec({ argv: ["true"] })).exitCode).toBe(0);
      await first.sandbox.destroy();
      await second.sandbox.destroy();
    } finally {
      await pooledBackend.close();
    }
    await pooledBackend.close();
    expect(pooledBackend.poolStats()).toEqual({ idle: 0, backingOff: 0 });
  });

  it("list names a tenant's sandboxes, and only for that tenant", async () => {
    const sandbox = await ctx.create();
    const entry = await ctx.listed(sandbox.info.sessionId);
    expect(entry).toMatchObject({ sessionId: sandbox.info.sessionId, tenant: ctx.tenant, running: true });
    expect(entry?.id).toEqual(expect.any(String));
    expect(entry?.controller).toEqual(expect.any(String));
    expect(await ctx.listed(sandbox.info.sessionId, `${ctx.tenant}-other`)).toBeUndefined();
    await sandbox.destroy();
    expect(await ctx.listed(sandbox.info.sessionId)).toBeUndefined();
  });

  it("remove takes a listed sandbox away; removing it again resolves", async () => {
    const sandbox = await ctx.create();
    const entry = await ctx.listed(sandbox.info.sessionId);
    if (!entry) throw new Error(`list does not name session ${sandbox.info.sessionId}`);
    await ctx.backend.remove(entry);
    expect(await ctx.listed(sandbox.info.sessionId)).toBeUndefined();
    await ctx.backend.remove(entry);
    await sandbox.destroy();
  });

  it("adopt takes over a listed sandbox, which answers exec and reads; another tenant's request gets null", async () => {
    const sandbox = await ctx.create();
    await sandbox.writeFile("adopt.txt", Buffer.from("kept\n"));
    const entry = await ctx.listed(sandbox.info.sessionId);
    if (!entry) throw new Error(`list does not name session ${sandbox.info.sessionId}`);
    const request = adoptRequest(sandbox, entry.id, ctx.hostDir);
    expect(await ctx.backend.adopt({ ...request, tenant: `${ctx.tenant}-other` })).toBeNull();
    const adopted = await ctx.backend.adopt(request);
    if (!adopted) throw new Error(`adopt of ${entry.id} resolved null`);
    ctx.track(adopted);
    expect([adopted.info.sessionId, adopted.info.tenant]).toEqual([sandbox.info.sessionId, ctx.tenant]);
    const chunks: Buffer[] = [];
    const echo = await adopted.exec({ argv: ["echo", "adopted"] }, { onStdout: (c) => chunks.push(c) });
    expect([echo.exitCode, Buffer.concat(chunks).toString()]).toEqual([0, "adopted\n"]);
    const kept = await adopted.readFile("adopt.txt", { kind: "bytes", offset: 0, length: 100 });
    expect(kept.data.toString()).toBe("kept\n");
    await adopted.destroy();
    await sandbox.destroy();
    expect(await ctx.listed(sandbox.info.sessionId)).toBeUndefined();
  });

  it("gc: a dry run reports an expired sandbox and keeps it; the real run removes it", async () => {
    const tenant = `${ctx.tenant}-gc`;
    const sandbox = await ctx.create({ tenant });
    const entry = await ctx.listed(sandbox.info.sessionId, tenant);
    if (!entry) throw new Error(`list does not name session ${sandbox.info.sessionId}`);
    const now = new Date(Date.now() + 3 * 24 * 60 * 60_000);
    const expired = expect.objectContaining({
      id: entry.id,
      sessionId: entry.sessionId,
      tenant,
      reason: "expired",
    });
    expect(await ctx.backend.gc({ tenant, dryRun: true, now })).toEqual(expect.arrayContaining([expired]));
    expect(await ctx.listed(sandbox.info.sessionId, tenant)).toMatchObject({ id: entry.id });
    expect(await ctx.backend.gc({ tenant, now })).toEqual(expect.arrayContaining([expired]));
    expect(await ctx.listed(sandbox.info.sessionId, tenant)).toBeUndefined();
    await sandbox.destroy();
  });

  it("sweep of a scope that keeps nothing of another controller resolves; poolStats without a pool is zero", async () => {
    const removed = await ctx.backend.sweep({
      tenants: [`${ctx.tenant}-sweep`],
      controllerId: `conf-${randomUUID().slice(0, 8)}`,
      keep: () => true,
    });
    expect(removed).toEqual([]);
    expect(ctx.backend.poolStats()).toEqual({ idle: 0, backingOff: 0 });
  });

  it("close is idempotent", async () => {
    const backend = await ctx.target.open();
    await backend.close();
    await backend.close();
  });

  it("leaves nothing behind: the suite's tenants list no sandbox once their sessions are destroyed", async () => {
    await ctx.destroyTracked();
    for (const tenant of [ctx.tenant, `${ctx.tenant}-gc`, `${ctx.tenant}-pool`, `${ctx.tenant}-other`])
      expect(await ctx.backend.list([tenant])).toEqual([]);
  });
}
