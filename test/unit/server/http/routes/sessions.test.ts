import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pack } from "tar-stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../../../src/server/server.js";
import { auth, FakeBackend, serverParts, tenant, testConfig } from "../../../../helpers/server-fakes.js";

async function tarOf(
  entries: { name: string; type?: "file" | "symlink" | "directory"; linkname?: string; text?: string }[],
) {
  const p = pack();
  for (const e of entries) {
    if (e.type === "symlink") p.entry({ name: e.name, type: "symlink", linkname: e.linkname ?? "" });
    else if (e.type === "directory") p.entry({ name: e.name, type: "directory" });
    else p.entry({ name: e.name, mode: 0o644 }, e.text ?? "");
  }
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe("warden serve: sessions", () => {
  let dir: string;
  let roots: string;
  let server: RunningServer;
  let backend: FakeBackend;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-sess-"));
    roots = join(dir, "ws");
    await mkdir(join(roots, "proj"), { recursive: true });
    await writeFile(join(roots, "proj", "a.txt"), "old\n");
    await mkdir(join(dir, "ws-evil"), { recursive: true });
    backend = new FakeBackend();
    const config = testConfig(join(dir, "state"), [
      tenant("alpha", { workspaceRoots: [roots], quotas: { ...tenant("alpha").quotas, maxSessions: 2 } }),
      tenant("beta"),
    ]);
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

  const post = (payload: object, who: "alpha" | "beta" = "alpha") =>
    server.app.inject({ method: "POST", url: "/v1/sessions", headers: auth(who), payload });
  const postTar = (payload: Buffer, url = "/v1/sessions") =>
    server.app.inject({
      method: "POST",
      url,
      headers: { ...auth("alpha"), "content-type": "application/x-tar" },
      payload,
    });

  it("creates a session with the tenant's labels, capped default limits and a durable record", async () => {
    const res = await post({});
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.tenant).toBe("alpha");
    expect(body.image).toBe("warden-sandbox:latest");
    expect(body.workspaceMode).toBe("copy");
    expect(body.limits).toEqual({
      cpus: 1,
      memoryBytes: 512 * 1024 * 1024,
      workspaceBytes: 1e9,
      tmpBytes: 64 * 1024 * 1024,
      pids: 256,
    });
    expect(backend.created[0]).toMatchObject({
      sessionId: body.id,
      tenant: "alpha",
      sandbox: { ttlMs: 3_600_000 },
    });
    const record = JSON.parse(await readFile(join(dir, "state", "sessions", `${body.id}.json`), "utf8"));
    expect(record).toMatchObject({ version: 1, id: body.id, tenant: "alpha", containerId: "fake-1" });
  });

  it("limits over the tenant's caps are a 400 naming the field", async () => {
    const res = await post({ limits: { memoryBytes: 1024 * 1024 * 1024 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: "INVALID_ARGUMENT",
      message:
        "limits.memoryBytes 1073741824 exceeds tenant 'alpha' cap 536870912; ask for at most 536870912.",
    });
    const cpus = await post({ limits: { cpus: 3 } });
    expect(cpus.json().message).toBe("limits.cpus 3 exceeds tenant 'alpha' cap 2; ask for at most 2.");
    // /tmp is memory and pids bound forks: both are capped too (red team: tmpBytes 8 GiB raised the cgroup).
    const tmp = await post({ limits: { tmpBytes: 8589934592 } });
    expect(tmp.json().message).toBe(
      "limits.tmpBytes 8589934592 exceeds tenant 'alpha' cap 67108864; ask for at most 67108864.",
    );
    const tiny = await post({ limits: { cpus: 1e-10 } });
    expect(tiny.json().message).toBe("limits.cpus must be at least 0.01 (Docker's minimum), got 1e-10.");
    const pids = await post({ limits: { pids: 4096 } });
    expect(pids.json().message).toBe("limits.pids 4096 exceeds tenant 'alpha' cap 256; ask for at most 256.");
    // A batch of maxConcurrentToolCalls (4) calls must fit the session (issue 11, item 9).
    const few = await post({ limits: { pids: 51 } });
    expect(few.json().message).toBe(
      "limits.pids 51 is too small for tenant 'alpha''s maxConcurrentToolCalls 4: running 4 calls at once takes 52 pids (3 processes per call plus 40 for warden-helper); ask for at least 52.",
    );
    const typo = await post({ workspacepath: "/srv/ws" });
    expect(typo.json().message).toBe(
      "body has unknown field 'workspacepath'; the fields are image, workspaceMode, workspacePath, limits, tools, env, network and secrets (docs/server-api.md, API).",
    );
    const bad = await post({ limits: { cpus: -1 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^limits\.cpus must be > 0/);
    expect(backend.created).toHaveLength(0);
  });

  it("an image or workspace mode the tenant may not use is a 400 naming the field", async () => {
    const img = await post({ image: "alpine:latest" });
    expect(img.json().message).toBe(
      "image 'alpine:latest' is not allowed for tenant 'alpha'; allowed: warden-sandbox:latest.",
    );
    const mode = await post({ workspaceMode: "rw" });
    expect(mode.json().message).toBe(
      "workspaceMode 'rw' is not allowed for tenant 'alpha'; allowed: copy, ro.",
    );
  });

  it("a server-side workspace must lie under the tenant's roots, by whole path components", async () => {
    const ok = await post({ workspacePath: join(roots, "proj") });
    expect(ok.statusCode).toBe(201);
    expect(backend.created[0]!.sandbox?.workspace).toEqual({ hostPath: join(roots, "proj"), mode: "copy" });
    const evil = await post({ workspacePath: join(dir, "ws-evil") });
    expect(evil.statusCode).toBe(400);
    expect(evil.json().message).toBe(
      `workspacePath '${join(dir, "ws-evil")}' is not allowed; use a directory under one of the tenant's workspaceRoots.`,
    );
    const climb = await post({ workspacePath: `${roots}/proj/../../ws-evil` });
    expect(climb.statusCode).toBe(400);
    const other = await post({ workspacePath: join(roots, "proj") }, "beta");
    expect(other.statusCode).toBe(400);
  });

  it("maxSessions is a 429 with Retry-After", async () => {
    expect((await post({})).statusCode).toBe(201);
    expect((await post({})).statusCode).toBe(201);
    const third = await post({});
    expect(third.statusCode).toBe(429);
    expect(third.headers["retry-after"]).toBe("1");
    expect(third.json()).toEqual({
      code: "RATE_LIMITED",
      message: "Tenant 'alpha' has 2 live sessions (its maxSessions); close one first.",
    });
    // Another tenant is unaffected.
    expect((await post({}, "beta")).statusCode).toBe(201);
    // An upload at the quota is refused before it is unpacked (red team: 125 MB written, then 429).
    const upload = await postTar(await tarOf([{ name: "big.bin", text: "y".repeat(100_000) }]));
    expect(upload.statusCode).toBe(429);
    expect(await readdir(join(dir, "state", "uploads")).catch(() => [])).toEqual([]);
    // The quota is decided before the body is even read: a body that is no tar is a 429 too, not a 400.
    const garbage = await postTar(Buffer.from("not a tar archive"));
    expect(garbage.statusCode).toBe(429);
  });

  it("GET, list and DELETE; a deleted session is gone with its record", async () => {
    const id = (await post({})).json().id;
    const one = await server.app.inject({ method: "GET", url: `/v1/sessions/${id}`, headers: auth("alpha") });
    expect(one.json()).toMatchObject({ id, enabledTools: ["echo", "sleep", "spam"], runningBatches: 0 });
    // Clients often send a JSON content type with no body on DELETE: accepted.
    const del = await server.app.inject({
      method: "DELETE",
      url: `/v1/sessions/${id}`,
      headers: { ...auth("alpha"), "content-type": "application/json" },
    });
    expect(del.statusCode).toBe(204);
    expect(backend.sessions[0]!.closed).toBe(true);
    expect(await readdir(join(dir, "state", "sessions"))).toEqual([]);
    const again = await server.app.inject({
      method: "GET",
      url: `/v1/sessions/${id}`,
      headers: auth("alpha"),
    });
    expect(again.statusCode).toBe(404);
  });

  it("a tar body becomes a copy-mode workspace; unsafe entries are a 400", async () => {
    const tar = await tarOf([
      { name: "src/main.txt", text: "hello\n" },
      { name: "link", type: "symlink", linkname: "src" },
    ]);
    const res = await postTar(tar, "/v1/sessions?cpus=1");
    expect(res.statusCode).toBe(201);
    const ws = backend.created[0]!.sandbox!.workspace!;
    expect(ws.mode).toBe("copy");
    expect(await readFile(join(ws.hostPath, "src", "main.txt"), "utf8")).toBe("hello\n");
    for (const entries of [
      [{ name: "../escape.txt", text: "x" }],
      [{ name: "/etc/passwd", text: "x" }],
      [
        { name: "l", type: "symlink" as const, linkname: "/etc" },
        { name: "l/passwd", text: "x" },
      ],
    ]) {
      const bad = await postTar(await tarOf(entries));
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe("INVALID_ARGUMENT");
    }
    expect(await readdir(join(dir, "state", "uploads"))).toHaveLength(1);
  });

  it("red team: a file or directory entry named like an earlier symlink is a 400; nothing is written through it", async () => {
    const victim = join(dir, "victim.txt");
    await writeFile(victim, "original\n");
    const victimDir = join(dir, "victim-dir");
    await mkdir(victimDir, { mode: 0o700 });
    for (const entries of [
      [
        { name: "x", type: "symlink" as const, linkname: victim },
        { name: "x", text: "PWNED-by-tenant" },
      ],
      [
        { name: "y", type: "symlink" as const, linkname: victimDir },
        { name: "y", type: "directory" as const },
      ],
    ]) {
      const bad = await postTar(await tarOf(entries));
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe(
        `workspace tar entry '${entries[1]!.name}' repeats an earlier entry's name; each name may appear once.`,
      );
    }
    expect(await readFile(victim, "utf8")).toBe("original\n");
    // A name the file system refuses is named by its error code, never by the server's upload path.
    const long = await postTar(await tarOf([{ name: "n".repeat(300), text: "x" }]));
    expect(long.json().message).toBe(
      "workspace tar could not be unpacked (ENAMETOOLONG); check the entries' names (at most 255 bytes a component) and sizes.",
    );
    expect((await stat(victimDir)).mode & 0o777).toBe(0o700);
  });

  it("body size limits: JSON over jsonBodyLimitBytes and tar over tarBodyLimitBytes are a 413", async () => {
    const big = await post({ image: "x".repeat(70 * 1024) });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe("PAYLOAD_TOO_LARGE");
    const tar = await tarOf([{ name: "big.bin", text: "y".repeat(2 * 1024 * 1024) }]);
    const res = await postTar(tar);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: "Workspace tar is larger than 1048576 bytes (tarBodyLimitBytes); upload a smaller workspace.",
    });
    expect(backend.created).toHaveLength(0);
  });

  it("a tar of more entries than tarMaxEntries (100 here) is a 413 naming it; nothing is left unpacked", async () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, text: "" }));
    const res = await postTar(await tarOf(files(101)));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message:
        "Workspace tar has more than 100 entries (tarMaxEntries); upload fewer files, e.g. without build outputs.",
    });
    expect(backend.created).toHaveLength(0);
    expect(await readdir(join(dir, "state", "uploads"))).toEqual([]);
    expect((await postTar(await tarOf(files(100)))).statusCode).toBe(201);
  });

  it("GET /changes is a unified patch against the original workspace; /workspace is a tar", async () => {
    const id = (await post({ workspacePath: join(roots, "proj") })).json().id;
    const patch = await server.app.inject({
      method: "GET",
      url: `/v1/sessions/${id}/changes`,
      headers: auth("alpha"),
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.body).toBe(
      "diff --git a/a.txt b/a.txt\nindex 3367afdbbf91e638efe983616377c60477cc6612..3e757656cf36eca53338e520d134963a44f793f8\n" +
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n" +
        "diff --git a/b.txt b/b.txt\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..d5f7fc3f74f7dec08280f370a975b112e8f60818\n" +
        "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1,1 @@\n+added\n",
    );
    const tar = await server.app.inject({
      method: "GET",
      url: `/v1/sessions/${id}/workspace`,
      headers: auth("alpha"),
    });
    expect(tar.headers["content-type"]).toBe("application/x-tar");
    expect(tar.rawPayload.subarray(0, 5).toString()).toBe("a.txt");
  });
});
