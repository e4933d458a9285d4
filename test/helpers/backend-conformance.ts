/**
 * The backend conformance suite: one set of tests written against the SandboxBackend interface
 * only (src/sandbox/backend.ts), run on every backend (issue 38): the memory backend in the unit
 * project (test/unit/sandbox/memory/conformance.test.ts), Docker in the engine project
 * (test/engine/sandbox/docker/conformance.test.ts) and Kubernetes, runc and gVisor
 * (test/k8s/conformance.test.ts). Adding a backend means one folder, one registration in
 * src/sandbox/backends.ts and one call of `backendConformance` passing.
 *
 * Call it inside the backend's gate (describeEngine, describeK8s) so that a missing engine skips
 * visibly and fails under CI. Every test cleans up what it creates; the suite's tenants start with
 * `test-conf-` and carry a random part, so parallel runs never touch each other's sandboxes.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type {
  BackendCapabilities,
  BackendOptions,
  ManagedSandbox,
  SandboxBackend,
} from "../../src/sandbox/backend.js";
import type { Sandbox, SandboxIdentity, SandboxSpec } from "../../src/sandbox/types.js";
import { conformanceLifecycle } from "./backend-conformance-lifecycle.js";

/** A backend under test and what it must report. */
export interface ConformanceTarget {
  /** Opens a fresh backend with `options` (a warm pool for the claim tests). */
  open(options?: BackendOptions): Promise<SandboxBackend>;
  /** The capabilities it must report without a warm pool (`warmPool` is then false). */
  capabilities: Omit<BackendCapabilities, "warmPool">;
  /** What SandboxInfo.runtime must say for a spec without `runtime` (`runc`; Kubernetes: `default` or the RuntimeClass). */
  runtime: string;
  /** Spec fields every sandbox of the suite gets (the test image). */
  spec?: SandboxSpec;
}

/** What the tests of the suite share: the open backend, its tenants, a host workspace and a tracker. */
export interface ConformanceContext {
  target: ConformanceTarget;
  backend: SandboxBackend;
  /** The suite's main tenant (`test-conf-<random>`). */
  tenant: string;
  /** A host directory with seed.txt ("seed\n"), keep.txt ("keep\n") and link -> seed.txt. */
  hostDir: string;
  /** A sandbox of `tenant` (or identity's) with the host workspace, destroyed after the suite. */
  create(identity?: SandboxIdentity, spec?: SandboxSpec): Promise<Sandbox>;
  /** Destroys `sandbox` after the suite (whatever the test did to it). */
  track<S extends Sandbox>(sandbox: S): S;
  /** Destroys every tracked sandbox now (a test that failed half-way left its own). */
  destroyTracked(): Promise<void>;
  /** The sandbox of `sessionId` in backend.list([tenant]), or undefined. */
  listed(sessionId: string, tenant?: string, backend?: SandboxBackend): Promise<ManagedSandbox | undefined>;
}

/** The ExecResult fields that matter, without durationMs. */
function outcome(r: { exitCode: number; timedOut: boolean; aborted: boolean }) {
  return { exitCode: r.exitCode, timedOut: r.timedOut, aborted: r.aborted };
}

/** `capabilities` with every list sorted: the order of what a backend offers means nothing. */
function sortedCapabilities(capabilities: BackendCapabilities): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(capabilities).map(([key, value]) => [
      key,
      Array.isArray(value) ? [...value].sort() : value,
    ]),
  );
}

/** Registers the conformance tests of `target` in the current describe block (see the module comment). */
export function backendConformance(target: ConformanceTarget): void {
  const tracked: Sandbox[] = [];
  const ctx = { target, tenant: `test-conf-${randomUUID().slice(0, 8)}` } as ConformanceContext;
  ctx.track = (sandbox) => {
    tracked.push(sandbox);
    return sandbox;
  };
  ctx.destroyTracked = async () => {
    await Promise.allSettled(tracked.splice(0).map((s) => s.destroy()));
  };
  ctx.create = async (identity = {}, spec = {}) =>
    ctx.track(
      await ctx.backend.create(
        { ...target.spec, workspace: { hostPath: ctx.hostDir }, ...spec },
        { tenant: ctx.tenant, sessionId: `conf-${randomUUID()}`, ...identity },
      ),
    );
  ctx.listed = async (sessionId, tenant = ctx.tenant, backend = ctx.backend) =>
    (await backend.list([tenant])).find((m) => m.sessionId === sessionId);

  beforeAll(async () => {
    ctx.hostDir = mkdtempSync(join(tmpdir(), "warden-conformance-"));
    writeFileSync(join(ctx.hostDir, "seed.txt"), "seed\n");
    writeFileSync(join(ctx.hostDir, "keep.txt"), "keep\n");
    symlinkSync("seed.txt", join(ctx.hostDir, "link"));
    ctx.backend = await target.open();
  });

  afterAll(async () => {
    await ctx.destroyTracked();
    if (ctx.backend) {
      // A failed test may have left a sandbox its handle no longer names: remove by listing.
      const left = await ctx.backend.list([ctx.tenant]).catch(() => []);
      await Promise.allSettled(left.map((m) => ctx.backend.remove(m)));
      await ctx.backend.close();
    }
    if (ctx.hostDir) rmSync(ctx.hostDir, { recursive: true, force: true });
  });

  it("reports its kind and capabilities (no warm pool configured)", () => {
    expect(ctx.backend.kind).toMatch(/^[a-z]+$/);
    expect(sortedCapabilities(ctx.backend.capabilities)).toEqual(
      sortedCapabilities({ ...target.capabilities, warmPool: false }),
    );
    expect(ctx.backend.poolStats()).toEqual({ idle: 0, backingOff: 0 });
  });

  it("create: the sandbox's info names its session, tenant and runtime", async () => {
    const sessionId = `conf-${randomUUID()}`;
    const sandbox = await ctx.create({ sessionId });
    expect(sandbox.info).toMatchObject({
      sessionId,
      tenant: ctx.tenant,
      runtime: target.runtime,
      workspaceMode: "copy",
    });
    expect(sandbox.info.roots).toContain("/workspace");
    expect(sandbox.info.expiresAt.getTime()).toBeGreaterThan(sandbox.info.createdAt.getTime());
    await sandbox.destroy();
  });

  it("exec streams stdout in chunks and reports exit codes", async () => {
    const sandbox = await ctx.create();
    const chunks: Buffer[] = [];
    const echo = await sandbox.exec(
      { argv: ["echo", "hello", "world"] },
      { onStdout: (c) => chunks.push(c) },
    );
    expect(outcome(echo)).toEqual({ exitCode: 0, timedOut: false, aborted: false });
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => Buffer.isBuffer(c))).toBe(true);
    expect(Buffer.concat(chunks).toString("utf8")).toBe("hello world\n");
    expect(outcome(await sandbox.exec({ argv: ["true"] }))).toEqual({
      exitCode: 0,
      timedOut: false,
      aborted: false,
    });
    expect(outcome(await sandbox.exec({ argv: ["false"] }))).toEqual({
      exitCode: 1,
      timedOut: false,
      aborted: false,
    });
    await sandbox.destroy();
  });

  it("exec: timeoutMs ends a command with 124 and timedOut, an abort with 130 and aborted", async () => {
    const sandbox = await ctx.create();
    const timedOut = await sandbox.exec({ argv: ["sleep", "30"] }, { timeoutMs: 300 });
    expect(outcome(timedOut)).toEqual({ exitCode: 124, timedOut: true, aborted: false });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const aborted = await sandbox.exec({ argv: ["sleep", "30"] }, { signal: controller.signal });
    expect(outcome(aborted)).toEqual({ exitCode: 130, timedOut: false, aborted: true });
    await sandbox.destroy();
  });

  it("files: write, byte and line reads, stat, listDir, realpath, and the copied workspace", async () => {
    const sandbox = await ctx.create();
    await sandbox.writeFile("notes/a.txt", Buffer.from("one\ntwo\nthree\n"), { mode: 0o600 });
    const bytes = await sandbox.readFile("notes/a.txt", { kind: "bytes", offset: 4, length: 3 });
    expect([bytes.data.toString(), bytes.totalBytes, bytes.totalLines]).toEqual(["two", 14, undefined]);
    const lines = await sandbox.readFile("notes/a.txt", {
      kind: "lines",
      startLine: 2,
      maxLines: 1,
      maxBytes: 100,
    });
    expect([lines.data.toString(), lines.totalBytes, lines.totalLines]).toEqual(["two\n", 14, 3]);
    expect(await sandbox.stat("notes/a.txt")).toMatchObject({ type: "file", size: 14, mode: 0o600 });
    // A directory's set-ID bits are its filesystem's (a Pod's fsGroup volume makes directories set-group-ID).
    const notes = await sandbox.stat("notes");
    expect([notes?.type, (notes?.mode ?? 0) & 0o777]).toEqual(["directory", 0o755]);
    expect(await sandbox.stat("link")).toMatchObject({ type: "symlink" });
    expect(await sandbox.stat("nothing-here")).toBeNull();
    expect(await sandbox.listDir("notes")).toEqual([{ name: "a.txt", type: "file" }]);
    const root = await sandbox.listDir(".");
    expect(root.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "keep.txt", type: "file" },
      { name: "link", type: "symlink" },
      { name: "notes", type: "directory" },
      { name: "seed.txt", type: "file" },
    ]);
    const sorted = await sandbox.listDirSorted(".", { first: 2, headBytes: 1000, maxSymlinks: 5 });
    expect([sorted.total, sorted.head.map((e) => e.name), sorted.rest.count]).toEqual([
      4,
      ["keep.txt", "link"],
      0,
    ]);
    expect(await sandbox.realpath("notes/../notes/a.txt")).toBe("/workspace/notes/a.txt");
    expect(await sandbox.realpath("link")).toBe("/workspace/seed.txt");
    expect(await sandbox.realpath("missing/x")).toBe("/workspace/missing/x");
    expect((await sandbox.readFile("link", { kind: "bytes", offset: 0, length: 100 })).data.toString()).toBe(
      "seed\n",
    );
    await expect(
      sandbox.readFile("nothing-here", { kind: "bytes", offset: 0, length: 1 }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(sandbox.writeFile("x", Buffer.from(""), { mode: 0o4755 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await sandbox.destroy();
  });

  it("changedPaths: what was added and modified since the workspace was copied in, sorted by path", async () => {
    const sandbox = await ctx.create();
    expect(await sandbox.changedPaths()).toEqual([]);
    await sandbox.writeFile("seed.txt", Buffer.from("changed\n"));
    await sandbox.writeFile("notes/a.txt", Buffer.from("new\n"));
    expect(await sandbox.changedPaths()).toEqual([
      { path: "notes/a.txt", kind: "added" },
      { path: "seed.txt", kind: "modified" },
    ]);
    await sandbox.destroy();
  });

  it("destroy is idempotent, and a destroyed sandbox's calls reject SANDBOX_NOT_RUNNING", async () => {
    const sandbox = await ctx.create();
    await sandbox.destroy();
    await sandbox.destroy();
    await expect(sandbox.exec({ argv: ["true"] })).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    await expect(sandbox.readFile("keep.txt", { kind: "bytes", offset: 0, length: 1 })).rejects.toMatchObject(
      {
        code: "SANDBOX_NOT_RUNNING",
      },
    );
    expect(await ctx.listed(sandbox.info.sessionId)).toBeUndefined();
  });

  conformanceLifecycle(ctx);
}
