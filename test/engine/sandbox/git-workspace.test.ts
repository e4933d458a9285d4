/**
 * git works on a host repository mounted read-only or read-write. The mounted files keep the host's
 * owner while the sandbox runs as its own uid, and git (since 2.35.2, CVE-2022-24765) refuses a
 * repository another user owns ("detected dubious ownership"): the image's system gitconfig trusts
 * every directory (safe.directory=*), since inside the sandbox every directory is the session's.
 * Copy mode owns its copy, so it never met the check.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { TEST_IMAGE } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("git-ws");

describeEngine("git on a mounted host repository", () => {
  let host: string;
  let ro: Sandbox;
  let rw: Sandbox;
  beforeAll(async () => {
    host = await mkdtemp(join(tmpdir(), "warden-git-ws-"));
    await chmod(host, 0o777); // rw mode: the sandbox's uid writes the bind-mounted directory
    await writeFile(join(host, "a.txt"), "one\n");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: host });
    git("init", "-q", "-b", "main");
    git("add", "a.txt");
    git("commit", "-qm", "first");
    execFileSync("chmod", ["-R", "a+rwX", host]);
    const image = TEST_IMAGE ? { image: TEST_IMAGE } : {};
    [ro, rw] = await Promise.all([
      createSandbox({ tenant, ...image, workspace: { hostPath: host, mode: "ro" } }),
      createSandbox({ tenant, ...image, workspace: { hostPath: host, mode: "rw" } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([ro?.destroy(), rw?.destroy()]);
    await rm(host, { recursive: true, force: true });
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("ro: git status and git log read the repository", async () => {
    const r = await run(ro, "git status --short --branch && git log --format=%s");
    expect(r).toMatchObject({ exitCode: 0, stdout: "## main\nfirst\n" });
  });

  it("rw: git diff sees a change made in the sandbox", async () => {
    const r = await run(rw, "echo two > a.txt && git diff --stat && git -c core.pager=cat log --format=%s");
    expect(r).toMatchObject({
      exitCode: 0,
      stdout: " a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\nfirst\n",
    });
  });
});
