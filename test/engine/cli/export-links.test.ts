/**
 * Issue 37 item 6: the patch a copy-mode session saves holds nothing `warden apply` would refuse.
 * The sandbox makes links out of the workspace (to /tmp and to ../../../../etc/shadow), a file, and
 * replaces a workspace link by a regular file. The saved patch carries the file and the link's
 * replacement only: the links are named on stderr and in the sidecar `<patch>.left-out.json`,
 * `git apply` in a scratch copy of the workspace makes no link, and `warden apply` applies the rest
 * (the link replaced by the file, no false "changed on the host" conflict).
 */
import { execFile } from "node:child_process";
import { cp, lstat, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { agentTenant, containersOfTenant } from "../../helpers/agent-fixture.js";
import { ALLOW_ALL_NOTICE } from "../../helpers/cli-policy.js";
import { warden } from "../../helpers/cli-run.js";
import { describeEngine } from "../../helpers/engine.js";

const run = promisify(execFile);
const tenant = agentTenant("export-links");

/** Every symlink under `dir` (relative path -> target), not following any. */
async function linksUnder(dir: string, prefix = ""): Promise<Record<string, string>> {
  const links: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isSymbolicLink()) links[rel] = await readlink(join(dir, entry.name));
    else if (entry.isDirectory()) Object.assign(links, await linksUnder(join(dir, entry.name), rel));
  }
  return links;
}

describeEngine("the saved patch of a copy-mode session holds nothing warden apply refuses", () => {
  let home: string;
  const dirs: string[] = [];
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "warden-export-home-"));
    dirs.push(home);
    vi.stubEnv("WARDEN_HOME", home);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    expect(await containersOfTenant(tenant)).toBe(0);
  });

  it("links out of the workspace are left out and named; git apply makes no link; warden apply applies the rest", async () => {
    const ws = await mkdtemp(join(tmpdir(), "warden-export-ws-"));
    dirs.push(ws);
    await writeFile(join(ws, "keep.txt"), "keep\n");
    await symlink("keep.txt", join(ws, "swap"));
    const command =
      "ln -s /tmp/warden-export-target out-tmp && ln -s ../../../../etc/shadow shadow && " +
      "echo new > new.txt && rm swap && echo file > swap";
    const exec = await warden([
      "exec",
      "bash",
      JSON.stringify({ command }),
      "-w",
      ws,
      "--policy",
      "allow-all",
      "--tenant",
      tenant,
    ]);
    expect(exec.exitCode).toBe(0);
    const saved = /patch saved to (\S+) \(show it/.exec(exec.stderr)?.[1] ?? "";
    expect(saved.startsWith(join(home, "runs"))).toBe(true);
    expect(exec.stderr).toBe(
      ALLOW_ALL_NOTICE +
        "warden: left out of the patch, never applied: out-tmp (symlink not applied)\n" +
        "warden: left out of the patch, never applied: shadow (symlink not applied)\n" +
        `warden: the session changed 4 files in its copy of ${ws} (the host is untouched); ` +
        `patch saved to ${saved} (show it: warden diff ${saved}; apply it: warden apply ${saved}); ` +
        `2 change(s) left out of it are listed in ${saved}.left-out.json\n`,
    );
    expect(JSON.parse(await readFile(`${saved}.left-out.json`, "utf8"))).toEqual([
      { path: "out-tmp", reason: "symlink not applied" },
      { path: "shadow", reason: "symlink not applied" },
    ]);
    const patch = await readFile(saved, "utf8");
    expect(patch).not.toContain("new file mode 120000");
    expect(patch).not.toContain("etc/shadow");
    expect(patch).not.toContain("/tmp/warden-export-target");
    // A host link swapped for a file: git's form, the link deleted (by its target) and the file added.
    expect(patch).toContain("diff --git a/swap b/swap\ndeleted file mode 120000\n");

    // git apply, as a user would run it, in a scratch copy of the workspace (the swap link copied as a link).
    const scratch = await mkdtemp(join(tmpdir(), "warden-export-scratch-"));
    dirs.push(scratch);
    await cp(ws, scratch, { recursive: true, verbatimSymlinks: true });
    expect(await linksUnder(scratch)).toEqual({ swap: "keep.txt" });
    const git = { cwd: scratch, env: { ...process.env, GIT_CEILING_DIRECTORIES: tmpdir() } };
    await run("git", ["apply", "--check", saved], git);
    await run("git", ["apply", saved], git);
    expect(await linksUnder(scratch)).toEqual({});
    expect(await readFile(join(scratch, "swap"), "utf8")).toBe("file\n");

    const applied = await warden(["apply", saved]);
    expect(applied).toEqual({
      stdout: `Applied ${saved} to ${ws}: 2 written, 0 deleted.\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(await linksUnder(ws)).toEqual({});
    expect((await lstat(join(ws, "swap"))).isFile()).toBe(true);
    expect(await readFile(join(ws, "swap"), "utf8")).toBe("file\n");
    expect(await readFile(join(ws, "new.txt"), "utf8")).toBe("new\n");
    expect((await readdir(ws)).sort()).toEqual(["keep.txt", "new.txt", "swap"]);
  });
});
