/**
 * Red team: a sandbox with an rw workspace swapped a directory inside it for a symlink between the
 * server's check of another session's workspacePath and Docker's mount, which mounted a directory
 * outside the tenant's roots (another tenant's workspace). The guard closes that window.
 */
import { mkdir, mkdtemp, rename, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../src/server/audit.js";
import { HostWorkspaceGuard } from "../../src/server/host-workspace-guard.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { auth, FakeBackend, tenant, testConfig } from "./server-fakes.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-guard-"));
  await mkdir(join(dir, "ws", "c", "p1"), { recursive: true });
  await mkdir(join(dir, "outside"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("HostWorkspaceGuard", () => {
  it("runs creations one at a time, in order", async () => {
    const guard = new HostWorkspaceGuard();
    const order: string[] = [];
    const path = join(dir, "ws", "c");
    const slow = guard.run(
      path,
      () => [],
      async () => {
        order.push("a start");
        await new Promise((r) => setTimeout(r, 30));
        order.push("a end");
      },
    );
    const fast = guard.run(
      path,
      () => [],
      async () => {
        order.push("b");
      },
    );
    await Promise.all([slow, fast]);
    expect(order).toEqual(["a start", "a end", "b"]);
  });

  it("refuses a path swapped for a link after its check, and one inside a live rw workspace", async () => {
    const guard = new HostWorkspaceGuard();
    const p1 = join(dir, "ws", "c", "p1");
    const rw = join(dir, "ws", "c");
    await expect(
      guard.run(
        p1,
        () => [rw],
        async () => "created",
      ),
    ).rejects.toThrow(
      `workspacePath '${p1}' lies inside '${rw}', the rw workspace of a live session, whose sandbox could replace it with a link; close that session first or upload the workspace.`,
    );
    // The same directory as the rw workspace, or a sibling, is fine.
    expect(
      await guard.run(
        rw,
        () => [rw],
        async () => "created",
      ),
    ).toBe("created");
    await rename(p1, `${p1}.real`);
    await symlink(join(dir, "outside"), p1);
    await expect(
      guard.run(
        p1,
        () => [],
        async () => "created",
      ),
    ).rejects.toThrow(
      `workspacePath '${p1}' changed while the session was being created; send the request again.`,
    );
    // A refusal does not block the creations after it.
    expect(
      await guard.run(
        rw,
        () => [],
        async () => "next",
      ),
    ).toBe("next");
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
    server = await startServer({ config, backend, audit: createMemoryAuditLog(), listen: false });
  });
  afterEach(() => server.shutdown(0));

  const post = (payload: object) =>
    server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth("alpha"), payload });

  it("a workspacePath inside a live rw workspace is a 400 until that session closes", async () => {
    const rw = await post({ workspaceMode: "rw", workspacePath: join(dir, "ws", "c") });
    expect(rw.statusCode).toBe(201);
    const inner = await post({ workspaceMode: "ro", workspacePath: join(dir, "ws", "c", "p1") });
    expect(inner.statusCode).toBe(400);
    expect(inner.json().message).toBe(
      `workspacePath '${join(dir, "ws", "c", "p1")}' lies inside '${join(dir, "ws", "c")}', the rw workspace of a live session, whose sandbox could replace it with a link; close that session first or upload the workspace.`,
    );
    const closed = await server.app.inject({
      method: "DELETE",
      url: `/v1/sessions/${rw.json().id}`,
      headers: auth("alpha"),
    });
    expect(closed.statusCode).toBe(204);
    expect((await post({ workspaceMode: "ro", workspacePath: join(dir, "ws", "c", "p1") })).statusCode).toBe(
      201,
    );
  });
});
