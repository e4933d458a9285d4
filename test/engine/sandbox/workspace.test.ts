/** Workspace modes (copy, ro, rw), extra mounts, export and changedPaths, and the copy-mode quota (fault 26). */
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tar from "tar-stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox, getDocker } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { EXEC_PATHS, leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("workspace");
const LONG = `${"n".repeat(196)}.txt`;
const UNICODE = "résumé-日本語-🙂.md";

async function makeHostDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "warden-ws-"));
  await chmod(dir, 0o755); // readable by the sandbox user in ro mode
  await writeFile(join(dir, LONG), "long\n");
  await writeFile(join(dir, UNICODE), "unicode\n");
  await writeFile(join(dir, "secret.txt"), "s\n");
  await chmod(join(dir, "secret.txt"), 0o600);
  await writeFile(join(dir, "run.sh"), "#!/bin/sh\necho ran\n");
  await chmod(join(dir, "run.sh"), 0o755);
  await symlink("run.sh", join(dir, "link"));
  await mkdir(join(dir, "empty"));
  await mkdir(join(dir, "sub"));
  await writeFile(join(dir, "sub", "keep.txt"), "keep\n");
  return dir;
}

async function snapshot(dir: string): Promise<string> {
  const names = (await readdir(dir, { recursive: true })).sort();
  const parts: string[] = [];
  for (const name of names) {
    const st = await stat(join(dir, name)).catch(() => null);
    parts.push(`${name}:${st?.mode}:${st?.isFile() ? await readFile(join(dir, name), "utf8") : ""}`);
  }
  return parts.join("|");
}

for (const execPath of EXEC_PATHS) {
  describeEngine(`DockerSandbox workspace (${execPath})`, () => {
    let host: string;
    let extra: string;
    let copy: Sandbox;
    let ro: Sandbox;
    beforeAll(async () => {
      host = await makeHostDir();
      extra = await mkdtemp(join(tmpdir(), "warden-extra-"));
      await chmod(extra, 0o755);
      await writeFile(join(extra, "ref.txt"), "ref\n");
      [copy, ro] = await Promise.all([
        createSandbox({
          execPath,
          tenant,
          workspace: { hostPath: host },
          limits: { workspaceBytes: 32 * 1024 * 1024 },
        }),
        createSandbox({
          execPath,
          tenant,
          workspace: { hostPath: host, mode: "ro" },
          mounts: [{ hostPath: extra, containerPath: "/ref" }],
        }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([copy?.destroy(), ro?.destroy()]);
      await rm(host, { recursive: true, force: true });
      await rm(extra, { recursive: true, force: true });
      expect(await leftovers(tenant)).toEqual([]);
    });

    it("copy keeps long and unicode names, modes, symlinks, empty dirs; owner is its own uid", async () => {
      const owner = `${copy.info.uid}:${copy.info.uid}`;
      expect(copy.info.workspaceMode).toBe("copy");
      expect(copy.info.roots).toEqual(["/workspace"]);
      const r = await run(
        copy,
        `cd /workspace && find . -mindepth 1 -printf '%P %y %m %u:%g %l\\n' | LC_ALL=C sort && cat ${LONG} '${UNICODE}' && ./run.sh`,
      );
      expect(r.stdout).toBe(
        [
          `empty d 755 ${owner} `,
          `link l 777 ${owner} run.sh`,
          `${LONG} f 644 ${owner} `,
          `run.sh f 755 ${owner} `,
          `${UNICODE} f 644 ${owner} `,
          `secret.txt f 600 ${owner} `,
          `sub d 755 ${owner} `,
          `sub/keep.txt f 644 ${owner} `,
          "long",
          "unicode",
          "ran",
          "",
        ].join("\n"),
      );
    });

    it("copy never writes the host dir; export and changedPaths report the changes", async () => {
      const before = await snapshot(host);
      await copy.writeFile("new.txt", Buffer.from("new\n"));
      await copy.writeFile("sub/keep.txt", Buffer.from("changed\n"));
      const r = await run(copy, "rm secret.txt && rmdir empty && echo x > run.sh");
      expect(r.exitCode).toBe(0);
      expect(await snapshot(host)).toBe(before);
      expect(await copy.changedPaths()).toEqual([
        { path: "new.txt", kind: "added" },
        { path: "run.sh", kind: "modified" },
        { path: "secret.txt", kind: "deleted" },
        { path: "sub/keep.txt", kind: "modified" },
      ]);
      const entries = new Map<string, string>();
      const extract = tar.extract();
      (await copy.exportWorkspace()).pipe(extract);
      for await (const entry of extract) {
        const chunks: Buffer[] = [];
        for await (const chunk of entry) chunks.push(chunk as Buffer);
        entries.set(entry.header.name, Buffer.concat(chunks).toString());
      }
      expect(entries.get("./new.txt")).toBe("new\n");
      expect(entries.get("./sub/keep.txt")).toBe("changed\n");
      expect(entries.get(`./${UNICODE}`)).toBe("unicode\n");
      expect(entries.has("./secret.txt")).toBe(false);
    });

    it("case 26 (workspace): dd stops with ENOSPC at the quota, then echo ok still works", async () => {
      const dd = await run(copy, "dd if=/dev/zero of=/workspace/fill bs=1M count=1000000", {
        timeoutMs: 120_000,
      });
      expect(dd.exitCode).toBe(1);
      expect(dd.timedOut).toBe(false);
      expect(dd.stderr).toContain("No space left on device");
      const size = await copy.stat("/workspace/fill");
      expect(size?.size).toBeLessThanOrEqual(32 * 1024 * 1024);
      expect(size?.size).toBeGreaterThan(31 * 1024 * 1024);
      const ok = await run(copy, "echo ok");
      expect(ok).toMatchObject({ exitCode: 0, stdout: "ok\n" });
      await run(copy, "rm /workspace/fill");
    });

    it("ro refuses writes; extra mounts are read-only and listed in roots", async () => {
      expect(ro.info.roots).toEqual(["/workspace", "/ref"]);
      const r = await run(
        ro,
        "echo x > /workspace/new.txt; echo x > /ref/new.txt; cat /ref/ref.txt /workspace/sub/keep.txt",
      );
      expect(r.stderr).toBe(
        "bash: line 1: /workspace/new.txt: Read-only file system\nbash: line 1: /ref/new.txt: Read-only file system\n",
      );
      expect(r.stdout).toBe("ref\nkeep\n");
      // The caller's path is at fault (EROFS), not the engine: 403 in warden serve.
      await expect(ro.writeFile("/workspace/w.txt", Buffer.from("w"))).rejects.toMatchObject({
        code: "PERMISSION_DENIED",
      });
      expect(await readdir(host)).not.toContain("w.txt");
    });

    it("rw writes through to the host directory", async () => {
      const dir = await mkdtemp(join(tmpdir(), "warden-rw-"));
      await chown(dir, 1000, 1000); // rw: the sandbox user (uid 1000) must own what it writes into
      try {
        await using rw = await createSandbox({ execPath, tenant, workspace: { hostPath: dir, mode: "rw" } });
        await rw.writeFile("out.txt", Buffer.from("through\n"));
        expect(await readFile(join(dir, "out.txt"), "utf8")).toBe("through\n");
        expect(await rw.changedPaths()).toEqual([{ path: "out.txt", kind: "added" }]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}

describeEngine("DockerSandbox changedPaths over the channel", () => {
  it("hashes the workspace through the helper's channel: no docker exec (the engine's CPU is shared)", async () => {
    const sandbox = await createSandbox({ execPath: "channel", tenant });
    try {
      await sandbox.writeFile("made.txt", Buffer.from("made\n"));
      // A name with a backslash and a newline, and a link: find and sha256sum -z print them unescaped.
      const odd = "a\\b\nc";
      await sandbox.writeFile(odd, Buffer.from("odd\n"));
      expect((await sandbox.exec({ argv: ["ln", "-s", "made.txt", "l ink"] })).exitCode).toBe(0);
      const since = Date.now() / 1000;
      expect(await sandbox.changedPaths()).toEqual([
        { path: odd, kind: "added" },
        { path: "l ink", kind: "added" },
        { path: "made.txt", kind: "added" },
      ]);
      // Docker's events API, read back for the window: every exec the engine made for this container.
      const until = Date.now() / 1000 + 1;
      await new Promise((r) => setTimeout(r, 1100));
      const events = (await getDocker().getEvents({
        since: Number(since.toFixed(3)),
        until: Number(until.toFixed(3)),
        filters: { container: [sandbox.info.containerId], event: ["exec_create"] },
      })) as NodeJS.ReadableStream;
      const lines: string[] = [];
      for await (const chunk of events) lines.push(...String(chunk).split("\n").filter(Boolean));
      expect(lines).toEqual([]);
    } finally {
      await sandbox.destroy();
    }
    expect(await leftovers(tenant)).toEqual([]);
  });
});
