/**
 * Issue 37, item 3, proved live: a `.env` committed to the workspace's repository but absent from
 * its work tree (as when it is not copied into the sandbox) is still in `.git/objects`. With no
 * policy, `git show HEAD^{tree}:.env`, `git show :0:.env` and `git show <blob id>` print it; under
 * the shipped `ci` policy each is refused and prints nothing of it, while `git show HEAD:src/a.ts`
 * still runs. The workspace is mounted `rw` (as in issue13.test.ts: a repository the sandbox user
 * owns, so git does not stop at safe.directory).
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import { expectRefusedWithoutSecret, policyExec, shippedPolicyPath } from "../../helpers/policy-exec.js";

const SECRET = "API_TOKEN=s3cr3t-37";

describeEngine("issue 37 item 3: committed secrets through git's object names, live", () => {
  let ws: string;
  let blob: string;
  beforeAll(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-gitobjects-"));
    await mkdir(join(ws, "src"));
    await writeFile(join(ws, "src", "a.ts"), "export const a = 1;\n");
    await writeFile(join(ws, ".env"), `${SECRET}\n`);
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        encoding: "utf8",
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "init");
    blob = git("rev-parse", "--short", "HEAD:.env").trim();
    // The file is gone from the work tree; its blob stays in the index and .git/objects.
    await rm(join(ws, ".env"));
    execFileSync("chown", ["-R", "1000:1000", ws]);
    await chmod(ws, 0o777);
  });
  afterAll(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  const run = policyExec({ workspace: () => ws, mode: "rw", tenant: "test-gitobjects" });

  it("git show HEAD^{tree}:.env, :0:.env and a blob id print the secret with no policy, and are refused under ci", async () => {
    for (const command of ["git show HEAD^{tree}:.env", "git show :0:.env", `git show ${blob}`]) {
      const ran = await run(null, command);
      expect(ran.stdout).toContain(SECRET);
      expectRefusedWithoutSecret(await run(shippedPolicyPath("ci"), command), SECRET);
    }
  });

  it("the blob id's refusal names the object; git show HEAD:src/a.ts still runs under ci", async () => {
    const refused = await run(shippedPolicyPath("ci"), `git show ${blob}`);
    expect(refused.stderr).toContain(`git object ${blob} is not tied to a path`);
    const allowed = await run(shippedPolicyPath("ci"), "git show HEAD:src/a.ts");
    expect(allowed.exitCode).toBe(0);
    expect(allowed.stdout).toContain("export const a = 1;");
  });
});
