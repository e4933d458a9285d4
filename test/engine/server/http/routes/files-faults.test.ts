/**
 * The files routes answer a client's bad path with a 4xx and a stable code, never 500
 * SANDBOX_ERROR (issue 37 item 8): names over NAME_MAX, paths over PATH_MAX, a link through
 * /proc/1/root (denied to the sandbox user), files without permission, read-only directories,
 * symlink loops, a file where a parent directory should be, NUL bytes, the workspace directory
 * itself and FIFOs. Against a real `warden serve`, on both backends (test/helpers/backend.ts).
 */
import { expect, it } from "vitest";
import { describeBackend } from "../../../../helpers/backend.js";
import { servedSession } from "../../../../helpers/serve-tenants.js";

describeBackend("files routes: client faults are 4xx", () => {
  const { files, put, bash } = servedSession(`test-filesfault-${process.pid}`);
  const answer = async (r: Response) => ({ status: r.status, ...((await r.json()) as object) });

  it("a 300-byte file name is 400 naming NAME_MAX, both ways", async () => {
    const expected = {
      status: 400,
      code: "INVALID_ARGUMENT",
      message: `path has a name of 300 bytes ('${"a".repeat(32)}…'), over the 255-byte limit of a file name (NAME_MAX); use a shorter name.`,
    };
    expect(await answer(await put("a".repeat(300)))).toEqual(expected);
    expect(await answer(await files("a".repeat(300)))).toEqual(expected);
  });

  it("a path over PATH_MAX once resolved is 400 naming it; one just under it is read", async () => {
    const fits = `${"ab/".repeat(1361)}x`; // with "/workspace/", 4095 bytes
    expect((await files(fits)).status).toBe(404);
    expect(await answer(await files(`${fits}y`))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "path is 4096 bytes once resolved, over the 4095-byte limit of a path (PATH_MAX); use a shorter path.",
    });
  });

  it("a written file's name and path leave room for the temporary name it is written under (230 and 4070 bytes)", async () => {
    expect((await put("n".repeat(230))).status).toBe(200);
    expect(await answer(await put("n".repeat(231)))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message: `path has a name of 231 bytes ('${"n".repeat(32)}…'), over the 230-byte limit of a file name (NAME_MAX less the 25 bytes of the temporary name a file is written under); use a shorter name.`,
    });
    const fits = `${"ab/".repeat(1352)}xyz`; // with "/workspace/", 4070 bytes
    const written = await put(fits);
    expect([written.status, await written.json()]).toEqual([200, { path: `/workspace/${fits}`, bytes: 1 }]);
    expect(await answer(await put(`${fits}w`))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "path is 4071 bytes once resolved, over the 4070-byte limit of a path (PATH_MAX less the 25 bytes of the temporary name a file is written under); use a shorter path.",
    });
  });

  it("a symlink to /proc/1/root is 403 PERMISSION_DENIED (the sandbox user may not read PID 1's root)", async () => {
    await bash("ln -s /proc/1/root p1");
    const denied = {
      status: 403,
      code: "PERMISSION_DENIED",
      message:
        "resolving /workspace/p1 failed in the sandbox: readlink /proc/1/root: permission denied (EACCES).",
    };
    expect(await answer(await files("p1"))).toEqual(denied);
    expect(await answer(await files("p1/etc/passwd"))).toEqual({
      ...denied,
      message:
        "resolving /workspace/p1/etc/passwd failed in the sandbox: readlink /proc/1/root: permission denied (EACCES).",
    });
    expect(await answer(await put("p1/x"))).toEqual({
      ...denied,
      message:
        "resolving /workspace/p1/x failed in the sandbox: readlink /proc/1/root: permission denied (EACCES).",
    });
  });

  it("a file without read permission and a read-only directory are 403 PERMISSION_DENIED", async () => {
    await bash("echo secret > locked && chmod 000 locked && mkdir ro && chmod 555 ro");
    expect(await answer(await files("locked"))).toEqual({
      status: 403,
      code: "PERMISSION_DENIED",
      message:
        "reading /workspace/locked failed in the sandbox: open /workspace/locked: permission denied (EACCES).",
    });
    const readOnly = (await answer(await put("ro/x"))) as { status: number; code: string; message: string };
    expect([readOnly.status, readOnly.code]).toEqual([403, "PERMISSION_DENIED"]);
    // The helper's temporary name is random: the rest of the message is exact.
    expect(readOnly.message).toMatch(
      /^writing \/workspace\/ro\/x failed in the sandbox: open \/workspace\/ro\/\.x\.warden-[0-9a-f]{12}\.tmp: permission denied \(EACCES\)\.$/,
    );
  });

  it("a symlink loop and a file where a parent directory should be are 400", async () => {
    await bash("ln -s loop2 loop1 && ln -s loop1 loop2 && echo x > plain");
    expect(await answer(await files("loop1"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "resolving /workspace/loop1 failed in the sandbox: realpath /workspace/loop1: too many levels of symbolic links (ELOOP).",
    });
    expect(await answer(await put("plain/x"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "writing /workspace/plain/x failed in the sandbox: mkdir /workspace/plain/: file exists (EEXIST): a parent on the path exists and is not a directory; name a path whose parents are directories.",
    });
    expect(await bash("cat plain")).toBe("x\n");
  });

  it("NUL bytes, the workspace itself and a FIFO are 400 naming what is wrong", async () => {
    const nul = {
      status: 400,
      code: "INVALID_ARGUMENT",
      message: "path must be a non-empty string without NUL bytes.",
    };
    expect(await answer(await put("a\0b"))).toEqual(nul);
    expect(await answer(await files("a\0b"))).toEqual(nul);
    expect(await answer(await files("."))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message: "Path '.' is the workspace directory itself; name a file in it (e.g. 'dir/file.txt').",
    });
    expect(await answer(await put("/workspace"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "Path '/workspace' is the workspace directory itself; name a file in it (e.g. 'dir/file.txt').",
    });
    // A trailing "/" names a directory: no file "newdir" is written, none is read through "f/".
    expect(await answer(await put("newdir/"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message:
        "Path 'newdir/' ends with '/', which names a directory; name a file (without the trailing '/').",
    });
    expect(await bash("test -e newdir || echo absent")).toBe("absent\n");
    await put("f", "content");
    expect((await files("f/")).status).toBe(400);
    await bash("mkfifo pipe");
    expect(await answer(await files("pipe"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message: "pipe is a FIFO, socket or device; only regular files are read.",
    });
    expect(await answer(await put("pipe"))).toEqual({
      status: 400,
      code: "INVALID_ARGUMENT",
      message: "pipe is a FIFO, socket or device; only regular files are written.",
    });
  });
});
