/**
 * `warden serve` never discloses a host file through a link in a workspace (issue 11, trust boundary).
 * A root-only 0600 marker file lives outside every workspace; links to it (and to its directory) are
 * planted by an uploaded tar and by an earlier `rw` session. After `rm`ing them in the sandbox, no
 * response carries the marker: /changes shows each link as git does (mode 120000, its target text),
 * the workspace tar and the read/bash results carry no marker either.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tar from "tar-stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gitBlobId, NULL_OID } from "../../../src/review/index.js";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import type { RunningServer } from "../../../src/server/server.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import { removeTenant, startTestServer, testQuotas } from "../../helpers/server-fixture.js";

const suffix = randomBytes(4).toString("hex");
const TENANT = `test-links-${suffix}`;
const KEY = `key-links-${suffix}`;
const MARKER = `WARDEN-HOST-MARKER-${randomBytes(8).toString("hex")}`;

/** A tar (as bytes) of the given entries. */
async function tarOf(entries: Array<{ name: string; linkname?: string; content?: string }>): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    if (e.linkname) pack.entry({ name: e.name, type: "symlink", linkname: e.linkname });
    else pack.entry({ name: e.name, type: "file", mode: 0o644 }, e.content ?? "");
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** git's patch lines for a deleted link `path` whose target is `target` (mode 120000, no newline). */
const deletedLink = (path: string, target: string) => [
  `diff --git a/${path} b/${path}`,
  "deleted file mode 120000",
  `index ${gitBlobId(Buffer.from(target))}..${NULL_OID}`,
  `--- a/${path}`,
  "+++ /dev/null",
  "@@ -1,1 +0,0 @@",
  `-${target}`,
  "\\ No newline at end of file",
];

describeEngine("warden serve: no host file disclosed through workspace links", () => {
  let dir: string;
  let secretDir: string;
  let secret: string;
  let rwDir: string;
  let server: RunningServer;

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });
  const text = async (path: string, init: RequestInit = {}) => {
    const r = await call(path, init);
    const body = Buffer.from(await r.arrayBuffer());
    expect(body.includes(Buffer.from(MARKER))).toBe(false);
    return { status: r.status, body: body.toString("utf8") };
  };
  const tools = (id: string, toolCalls: unknown[]) =>
    text(`/v1/sessions/${id}/tool-calls`, { method: "POST", body: JSON.stringify({ toolCalls }) });

  /** Every trick that reads through a link in session `id`; none may return the marker. */
  const probe = async (id: string, links: string[]) => {
    for (const path of links) {
      await tools(id, [{ id: "r", name: "read", arguments: { path } }]);
      await tools(id, [
        { id: "b", name: "bash", arguments: { command: `cat ${path} ${path}/* 2>&1; true` } },
      ]);
    }
    expect((await text(`/v1/sessions/${id}/workspace`)).status).toBe(200);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-links-engine-"));
    secretDir = await mkdtemp(join(tmpdir(), "warden-links-secret-"));
    secret = join(secretDir, "marker");
    await writeFile(secret, `${MARKER}\n`, { mode: 0o600 });
    await chmod(secret, 0o600);
    const roots = join(dir, "roots");
    rwDir = join(roots, "rw");
    await mkdir(rwDir, { recursive: true });
    await chmod(rwDir, 0o777); // the sandbox user (1000) writes the rw workspace
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        tenants: [
          {
            id: TENANT,
            keys: [{ id: "k", sha256: hashKey(KEY) }],
            quotas: testQuotas(2),
            workspaceRoots: [roots],
            workspaceModes: ["copy", "rw"],
          },
        ],
      },
      dir,
    );
    server = await startTestServer(config);
  });

  afterAll(async () => {
    await server?.shutdown(0);
    await removeTenant(TENANT);
    await rm(dir, { recursive: true, force: true });
    await rm(secretDir, { recursive: true, force: true });
  });

  it("case: an uploaded link to a root-only host file, removed in the sandbox, shows as a link in /changes", async () => {
    const body = await tarOf([
      { name: "ok.txt", content: "fine\n" },
      { name: "leak", linkname: secret },
      { name: "secretdir", linkname: secretDir },
    ]);
    const created = await call("/v1/sessions", {
      method: "POST",
      headers: { "content-type": "application/x-tar" },
      body,
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await probe(id, ["leak", "secretdir", "secretdir/marker"]);
    await tools(id, [{ id: "rm", name: "bash", arguments: { command: "rm leak secretdir" } }]);
    const changes = await text(`/v1/sessions/${id}/changes`);
    expect(changes).toEqual({
      status: 200,
      body: [...deletedLink("leak", secret), ...deletedLink("secretdir", secretDir), ""].join("\n"),
    });
    await probe(id, ["leak", "secretdir/marker"]);
    expect((await call(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("a link the sandbox makes is left out of /changes, named before the patch, so git apply makes none", async () => {
    const created = await call("/v1/sessions", {
      method: "POST",
      headers: { "content-type": "application/x-tar" },
      body: await tarOf([{ name: "ok.txt", content: "fine\n" }]),
    });
    const { id } = (await created.json()) as { id: string };
    await tools(id, [
      { id: "mk", name: "bash", arguments: { command: `ln -s ${secret} out && echo new > new.txt` } },
    ]);
    const changes = await text(`/v1/sessions/${id}/changes`);
    expect(changes).toEqual({
      status: 200,
      body: [
        'warden-left-out: {"path":"out","reason":"symlink not applied"}',
        "diff --git a/new.txt b/new.txt",
        "new file mode 100644",
        `index ${NULL_OID}..${gitBlobId(Buffer.from("new\n"))}`,
        "--- /dev/null",
        "+++ b/new.txt",
        "@@ -0,0 +1,1 @@",
        "+new",
        "",
      ].join("\n"),
    });
    expect((await call(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("case: a link left on the host by an earlier rw session is shown as a link, never read through", async () => {
    const rw = (await (
      await call("/v1/sessions", {
        method: "POST",
        body: JSON.stringify({ workspacePath: rwDir, workspaceMode: "rw" }),
      })
    ).json()) as { id: string };
    await tools(rw.id, [
      { id: "ln", name: "bash", arguments: { command: `ln -s ${secret} leak && ln -s ${secretDir} sd` } },
    ]);
    expect((await call(`/v1/sessions/${rw.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await readlink(join(rwDir, "leak"))).toBe(secret);

    const copy = (await (
      await call("/v1/sessions", { method: "POST", body: JSON.stringify({ workspacePath: rwDir }) })
    ).json()) as { id: string };
    await probe(copy.id, ["leak", "sd/marker"]);
    await tools(copy.id, [
      {
        id: "rm",
        name: "bash",
        arguments: { command: "rm leak && echo new > leak && rm sd && mkdir sd && echo x > sd/marker" },
      },
    ]);
    const changes = await text(`/v1/sessions/${copy.id}/changes`);
    expect(changes.status).toBe(200);
    expect(changes.body).toBe(
      [
        ...deletedLink("leak", secret),
        "diff --git a/leak b/leak",
        "new file mode 100644",
        `index ${NULL_OID}..${gitBlobId(Buffer.from("new\n"))}`,
        "--- /dev/null",
        "+++ b/leak",
        "@@ -0,0 +1,1 @@",
        "+new",
        ...deletedLink("sd", secretDir),
        "diff --git a/sd/marker b/sd/marker",
        "new file mode 100644",
        `index ${NULL_OID}..${gitBlobId(Buffer.from("x\n"))}`,
        "--- /dev/null",
        "+++ b/sd/marker",
        "@@ -0,0 +1,1 @@",
        "+x",
        "",
      ].join("\n"),
    );
    await probe(copy.id, ["leak", "sd/marker"]);
    expect((await call(`/v1/sessions/${copy.id}`, { method: "DELETE" })).status).toBe(204);
  });
});
