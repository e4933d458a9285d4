/**
 * attack-38b F1, live in the sandbox's bash: a backslash-newline at the start of a line joins
 * nothing in bash (the pair is removed, so `rm -rf src` is the next command), while
 * tree-sitter-bash read `ls -d src`, the pair and `rm -rf src` as one command `ls -d src rm -rf
 * src`, which readonly allowed. The workspace is mounted `rw`, so the deletion is seen on the host:
 * under readonly the script is refused and src stays; with no policy it deletes src.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import { hostFileExists, policyExec, shippedPolicyPath } from "../../helpers/policy-exec.js";

describeEngine("attack-38b F1: line continuations, live", () => {
  let ws: string;
  beforeAll(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-continuations-"));
    await mkdir(join(ws, "src"));
    await writeFile(join(ws, "src", "a.ts"), "x\n");
    execFileSync("chown", ["-R", "1000:1000", ws]);
    await chmod(ws, 0o777);
  });
  afterAll(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  const run = policyExec({ workspace: () => ws, mode: "rw", tenant: "test-continuations" });
  const command = "ls -d src\n\\\nrm -rf src\nls -d src || echo GONE";

  it("readonly refuses `ls`, a line holding only a backslash, and `rm -rf src`; with no policy src is deleted", async () => {
    const refused = await run(shippedPolicyPath("readonly"), command);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("Tool call refused: bash part 'rm -rf src'");
    expect(refused.stdout).toBe("");
    expect(await hostFileExists(join(ws, "src", "a.ts"))).toBe(true);
    const free = await run(null, command);
    expect(free.stdout).toContain("GONE");
    expect(await hostFileExists(join(ws, "src", "a.ts"))).toBe(false);
  });
});
