/**
 * Red team: a sandbox with an rw workspace swapped a directory inside it for a symlink between the
 * server's check of another session's workspacePath and its use (Docker's mount, or the copy's
 * walk), which exposed a directory outside the tenant's roots. The guard closes those windows.
 */
import { mkdir, mkdtemp, rename, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../../src/server/server.js";
import { HostWorkspaceGuard } from "../../../../src/server/sessions/host-workspace-guard.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../helpers/server-fakes.js";

let dir: string;
let rw: string;
let p1: string;
const created = async () => "created";
const overlap = (path: string, rwPath: string) =>
  `workspacePath '${path}' overlaps '${rwPath}', the rw workspace of a live session, whose sandbox could replace a directory in it with a link; close that session first or upload the workspace.`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-guard-"));
  rw = join(dir, "ws", "c");
  p1 = join(rw, "p1");
  await mkdir(p1, { recursive: true });
  await mkdir(join(dir, "outside"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("HostWorkspaceGuard", () => {
  it("runs creations one at a time, in order", async () => {
    const guard = new HostWorkspaceGuard();
    const order: string[] = [];
    const slow = guard.run(
      rw,
      "ro",
      () => [],
      async () => {
        order.push("a start");
        await new Promise((r) => setTimeout(r, 30));
        order.push("a end");
      },
    );
    const fast = guard.run(
      rw,
      "ro",
      () => [],
      async () => {
        order.push("b");
      },
    );
    await Promise.all([slow, fast]);
    expect(order).toEqual(["a start", "a end", "b"]);
  });

  it("a creation waits for one inside or around its path, never for one on a disjoint path", async () => {
    const guard = new HostWorkspaceGuard();
    const order: string[] = [];
    // No timers: the creation around the path ends only once the disjoint one has started, so a
    // guard that queued the disjoint one behind it would never finish (the test's timeout), and the
    // order below holds however busy the machine is.
    let disjointStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      disjointStarted = resolve;
    });
    const step =
      (name: string, during: () => Promise<void> = () => Promise.resolve()) =>
      async () => {
        order.push(`${name} start`);
        await during();
        order.push(`${name} end`);
      };
    const outside = join(dir, "outside");
    await Promise.all([
      guard.run(
        rw,
        "copy",
        () => [],
        step("around", () => started),
      ),
      guard.run(p1, "ro", () => [], step("inside")),
      guard.run(
        outside,
        "rw",
        () => [],
        step("disjoint", async () => disjointStarted()),
      ),
    ]);
    // Red team: with one server-wide queue, a tenant's 60,000-file copy held another's create 126 s.
    const at = (name: string) => order.indexOf(name);
    expect({
      disjointRanDuringAround: at("disjoint start") < at("around end"),
      insideWaitedForAround: at("inside start") > at("around end"),
    }).toEqual({ disjointRanDuringAround: true, insideWaitedForAround: true });
  });

  it("bind mounts: refuses a path inside a live rw workspace; the workspace itself or around it is fine", async () => {
    const guard = new HostWorkspaceGuard();
    await expect(guard.run(p1, "ro", () => [rw], created)).rejects.toThrow(overlap(p1, rw));
    // The sandbox cannot rename its own mount point or anything above it.
    expect(await guard.run(rw, "ro", () => [rw], created)).toBe("created");
    expect(await guard.run(join(dir, "ws"), "rw", () => [rw], created)).toBe("created");
  });

  it("copies: refuses a path equal to, inside or around a live rw workspace (the walk reads through it)", async () => {
    const guard = new HostWorkspaceGuard();
    for (const path of [rw, p1, join(dir, "ws")]) {
      await expect(guard.run(path, "copy", () => [rw], created)).rejects.toThrow(overlap(path, rw));
    }
    expect(await guard.run(join(dir, "outside"), "copy", () => [rw], created)).toBe("created");
  });

  it("refuses a path swapped for a link after its check; a refusal does not block the next", async () => {
    const guard = new HostWorkspaceGuard();
    await rename(p1, `${p1}.real`);
    await symlink(join(dir, "outside"), p1);
    await expect(guard.run(p1, "ro", () => [], created)).rejects.toThrow(
      `workspacePath '${p1}' changed while the session was being created; send the request again.`,
    );
    expect(await guard.run(rw, "ro", () => [], created)).toBe("created");
  });
});

describe("warden serve: sessions on host directories", () => {
  let server: RunningServer;
  let backend: FakeBackend;
  beforeEach(async () => {
    backend = new FakeBackend();
    const alpha = tenant("alpha", {
      workspaceRoots: [join(dir, "ws")],
      workspaceModes: ["copy", "ro", "rw"],
    });
    const config = testConfig(join(dir, "state"), [alpha, tenant("beta")]);
    server = await startServer({
      config,
      ...serverParts(backend),
      audit: createMemoryAuditLog(),
      listen: false,
    });
  });
  afterEach(() => server.shutdown(0));

  const post = (payload: object) =>
    server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload });

  it("a workspacePath overlapping a live rw workspace is a 400 until that session has closed", async () => {
    const live = await post({ workspaceMode: "rw", workspacePath: rw });
    expect(live.statusCode).toBe(201);
    const inner = await post({ workspaceMode: "ro", workspacePath: p1 });
    expect(inner.statusCode).toBe(400);
    expect(inner.json().message).toBe(overlap(p1, rw));
    expect((await post({ workspaceMode: "copy", workspacePath: join(dir, "ws") })).statusCode).toBe(400);
    // While the rw session closes, its sandbox may still run: the path counts as live until it is gone.
    let finishClose: () => void = () => {};
    const session = backend.sessions[0]!;
    const close = session.close;
    session.close = () => new Promise<void>((resolve) => (finishClose = () => void close().then(resolve)));
    const closing = server.app.inject({
      method: "DELETE",
      url: `/v1/sessions/${live.json().id}`,
      headers: auth("alpha"),
    });
    await expect.poll(() => server.ctx.registry.all().length).toBe(0);
    expect((await post({ workspaceMode: "ro", workspacePath: p1 })).statusCode).toBe(400);
    finishClose();
    expect((await closing).statusCode).toBe(204);
    expect((await post({ workspaceMode: "ro", workspacePath: p1 })).statusCode).toBe(201);
  });
});
