/**
 * GET /workspace and GET /changes stay bounded with huge (sparse) files (issue 37 item 8): the tar
 * download refuses a workspace over WORKSPACE_DOWNLOAD_MAX_BYTES of apparent size with a 413
 * naming the file or the total and the limit, and a review compares a file over
 * HASH_MAX_FILE_BYTES by size and mtime instead of hashing it (a 500 GB sparse file, whose sha256
 * would read 500 GB of zeros, costs one stat). Against a real `warden serve` on both backends.
 */
import tar from "tar-stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WardenClient } from "../../../../src/client/index.js";
import { WORKSPACE_DOWNLOAD_MAX_BYTES } from "../../../../src/server/http/workspace-download.js";
import { describeBackend, itDocker } from "../../../helpers/backend.js";
import { type ServedTenants, serveTenants } from "../../../helpers/serve-tenants.js";

describeBackend("workspace download and review bounds", () => {
  let served: ServedTenants;
  let client: WardenClient;
  const get = (id: string, what: string) =>
    fetch(`${served.url}/v1/sessions/${id}/${what}`, {
      headers: { authorization: `Bearer ${served.keys.main}` },
    });
  const bash = async (id: string, command: string) => {
    const [r] = await client.runToolCalls(id, [{ id: "b", name: "bash", arguments: { command } }]);
    return r?.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  };

  beforeAll(async () => {
    served = await serveTenants(`test-wsbounds-${process.pid}`);
    client = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("GET /workspace refuses a sparse file over the limit by its apparent size: 413 naming it and the limit", async () => {
    const { id } = await client.createSession();
    await bash(id, "echo small > a.txt && truncate -s 500G huge.img");
    const refused = await get(id, "workspace");
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: `File 'huge.img' (536870912000 bytes) is over the workspace download limit of ${WORKSPACE_DOWNLOAD_MAX_BYTES} bytes (apparent sizes: a sparse file counts whole); remove or truncate it, or read what you need with GET /v1/sessions/:id/files.`,
    });

    // Files each under the limit but over it together: the total is named.
    await bash(id, "rm huge.img && truncate -s 1536M part1 part2");
    const total = await get(id, "workspace");
    expect(total.status).toBe(413);
    const body = (await total.json()) as { code: string; message: string };
    expect(body.code).toBe("PAYLOAD_TOO_LARGE");
    // du -sb's total: the files' 3 GiB plus the directory's own few bytes.
    const bytes = Number(/^The workspace \((\d+) bytes\)/.exec(body.message)?.[1]);
    expect(bytes - 2 * 1536 * 1024 * 1024).toBeLessThan(4096);
    expect(body.message).toBe(
      `The workspace (${bytes} bytes) is over the workspace download limit of ${WORKSPACE_DOWNLOAD_MAX_BYTES} bytes (apparent sizes: a sparse file counts whole); remove files, or read what you need with GET /v1/sessions/:id/files or /changes.`,
    );

    await bash(id, "rm part1 part2");
    const ok = await get(id, "workspace");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/x-tar");
    expect((await ok.arrayBuffer()).byteLength).toBeGreaterThan(0);
    await client.deleteSession(id);
  });

  itDocker(
    "Docker's archive API reads as root; on Kubernetes the helper tars as the sandbox user",
    "a directory the sandbox user may not read does not fail the measuring: the download is a 200",
    async () => {
      const { id } = await client.createSession();
      await bash(id, "mkdir -p closed/in && echo x > closed/in/f && chmod 000 closed");
      const ok = await get(id, "workspace");
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      await bash(id, "chmod 755 closed");
      await client.deleteSession(id);
    },
  );

  it("GET /changes finishes with a 500 GB sparse file in the workspace, listing it as changed", async () => {
    const { id } = await client.createSession();
    await bash(id, "truncate -s 500G huge.img && echo hi > note.txt");
    const changes = await get(id, "changes");
    expect(changes.status).toBe(200);
    const patch = await changes.text();
    expect(patch).toContain("diff --git a/huge.img b/huge.img\nnew file mode 100644\n");
    expect(patch).toContain("Binary files /dev/null and b/huge.img differ");
    expect(patch).toContain("+hi\n");
    await client.deleteSession(id);
  });

  it("a large copied file compares by size and mtime: unchanged is no change, touched is", async () => {
    // 17 MiB, over HASH_MAX_FILE_BYTES (16 MiB): its baseline is its size and mtime, never a hash.
    const pack = tar.pack();
    pack.entry(
      { name: "big.bin", size: 17 * 1024 * 1024, mtime: new Date("2020-01-01T00:00:00Z") },
      Buffer.alloc(17 * 1024 * 1024),
    );
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack) chunks.push(chunk as Buffer);
    const session = await client.createSessionFromTar(Buffer.concat(chunks));
    expect(await (await get(session.id, "changes")).text()).toBe("");
    // An mtime of another second (a change within the second of the copy would not show: the
    // bound is whole seconds, as the copy's tar headers keep them).
    await bash(session.id, "touch -d 2001-01-01 big.bin");
    expect(await (await get(session.id, "changes")).text()).toBe(
      "diff --git a/big.bin b/big.bin\nBinary files a/big.bin and b/big.bin differ\n",
    );
    await client.deleteSession(session.id);
  });
});
