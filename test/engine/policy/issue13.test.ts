/**
 * Issue 13, proved live: each bypass class's example, run with `warden exec --policy <shipped>`
 * against a real sandbox, is refused and does nothing; the same command with no policy does what
 * the policy must stop (so the refusal is what kept the workspace intact).
 */
import { execFileSync } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ALLOW_ALL_NOTICE } from "../../helpers/cli-policy.js";
import { describeEngine } from "../../helpers/engine.js";
import {
  expectRefusalPrevents,
  hostFileExists,
  policyExec,
  shippedPolicyPath,
} from "../../helpers/policy-exec.js";

describeEngine("issue 13: bypass classes refused live under the shipped policies", () => {
  let ws: string;
  beforeEach(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-policy13-"));
    await chmod(ws, 0o777);
    await mkdir(join(ws, "src"), { mode: 0o777 });
    await chmod(join(ws, "src"), 0o777);
    await writeFile(join(ws, "src", "a.ts"), "export {};\n");
  });
  afterEach(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  const run = policyExec({ workspace: () => ws, mode: "rw", tenant: "test-policy13" });

  it("nested command substitution: echo `echo \\`rm -rf src\\`` is denied by deny-rm under default; src intact", async () => {
    const command = "echo `echo \\`rm -rf src\\``";
    const refused = await run(shippedPolicyPath("default"), command);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("bash part 'rm -rf src' is denied by rule 'deny-rm'");
    expect(await hostFileExists(join(ws, "src", "a.ts"))).toBe(true);
    const ran = await run(null, command);
    expect(ran.stderr).toBe(ALLOW_ALL_NOTICE);
    expect(await hostFileExists(join(ws, "src", "a.ts"))).toBe(false);
  });

  it.each([
    ["arithmetic on a variable", "x='a[$(touch pwned)]'; echo $((x))"],
    ["env --s abbreviation", "env --s='touch pwned'"],
  ])("%s: %s is refused under readonly and creates nothing", async (_class, command) => {
    await expectRefusalPrevents(run, {
      policy: shippedPolicyPath("readonly"),
      command,
      reason: "Tool call refused",
      effect: join(ws, "pwned"),
    });
  });

  it.each([
    ["awk system()", "awk 'BEGIN{system(\"touch pwned\")}'"],
    ["awk print to a pipe", "echo x | awk '{print | \"touch pwned\"}'"],
    ["python3 -c", 'python3 -c \'open("pwned", "w")\''],
  ])(
    "%s: %s, under a policy that allows awk and python3 by name, is refused and creates nothing",
    async (_class, command) => {
      const policy = new URL("../../fixtures/bypass-corpus-model-policy.yaml", import.meta.url).pathname;
      await expectRefusalPrevents(run, {
        policy,
        command,
        reason: "this form runs other programs; no allow rule accepts that effect",
        effect: join(ws, "pwned"),
      });
    },
  );

  it("git status in a repository whose config sets core.fsmonitor is refused under readonly; nothing runs", async () => {
    execFileSync("git", ["init", "-q", ws]);
    execFileSync("git", ["-C", ws, "config", "core.fsmonitor", "touch /workspace/pwned; false"]);
    execFileSync("chown", ["-R", "1000:1000", ws]);
    const refused = await run(shippedPolicyPath("readonly"), "git status");
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      '(core.fsmonitor = "touch /workspace/pwned; false" in /workspace/.git/config)',
    );
    expect(await hostFileExists(join(ws, "pwned"))).toBe(false);
    await run(null, "git status");
    expect(await hostFileExists(join(ws, "pwned"))).toBe(true);
    await chown(ws, 0, 0);
  });
});
