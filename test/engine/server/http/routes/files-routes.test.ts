/**
 * PUT/GET /v1/sessions/:id/files against a real `warden serve`: confinement, symlinks, size limit.
 * On both backends (test/helpers/backend.ts).
 */
import { expect, it } from "vitest";
import { describeBackend } from "../../../../helpers/backend.js";
import { servedSession } from "../../../../helpers/serve-tenants.js";

describeBackend("files routes", () => {
  const { files, put, bash } = servedSession(`test-files-${process.pid}`, { filesMaxBytes: 1024 });

  it("writes a file (parents created) and reads its bytes back; the tools see it", async () => {
    const written = await put("dir/a.txt", "hello files\n");
    expect(written.status).toBe(200);
    expect(await written.json()).toEqual({ path: "/workspace/dir/a.txt", bytes: 12 });
    const read = await files("/workspace/dir/a.txt");
    expect(read.status).toBe(200);
    expect(read.headers.get("content-type")).toBe("application/octet-stream");
    expect(await read.text()).toBe("hello files\n");
    expect(await bash("cat dir/a.txt")).toBe("hello files\n");
  });

  it("refuses paths outside the workspace, lexically and through a symlink", async () => {
    const up = await put("../etc/x", "no");
    expect(up.status).toBe(403);
    expect(((await up.json()) as { code: string }).code).toBe("PATH_OUTSIDE_WORKSPACE");
    await bash("ln -s /etc/passwd out");
    const out = await files("out");
    expect(out.status).toBe(403);
    expect(await out.json()).toEqual({
      code: "PATH_OUTSIDE_WORKSPACE",
      message:
        "Path 'out' resolves to '/etc/passwd', which is outside the workspace and the session's mounts.",
    });
  });

  it("never writes through a symlink, even one pointing inside the workspace", async () => {
    await put("target.txt", "original\n");
    await bash("ln -s target.txt link && mkdir real && ln -s real linkdir");
    const viaLink = await put("link", "changed\n");
    expect(viaLink.status).toBe(400);
    expect(((await viaLink.json()) as { message: string }).message).toBe(
      "Path 'link' goes through a symlink (it resolves to '/workspace/target.txt'); files are not written through symlinks: name the target path.",
    );
    expect((await put("linkdir/f.txt", "x")).status).toBe(400);
    expect(await bash("cat target.txt; ls real | wc -l; test -L link && echo still-a-link")).toBe(
      "original\n0\nstill-a-link\n",
    );
  });

  it("limits both directions to filesMaxBytes, naming it", async () => {
    const big = await put("big.txt", "x".repeat(1025));
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({
      code: "PAYLOAD_TOO_LARGE",
      message: "The file body is over filesMaxBytes (1024 bytes); raise filesMaxBytes in the server config.",
    });
    await bash("head -c 2000 /dev/zero > zeros");
    const read = await files("zeros");
    expect(read.status).toBe(413);
    expect(((await read.json()) as { message: string }).message).toBe(
      "File 'zeros' (2000 bytes) is over filesMaxBytes (1024 bytes); raise filesMaxBytes in the server config.",
    );
    expect((await files("missing.txt")).status).toBe(404);
  });
});
