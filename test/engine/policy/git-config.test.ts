/**
 * attack-37 F1, proved live: a read-only `git status`, allowed by the shipped `ci` policy, is
 * refused when git would run a `core.fsmonitor` planted where the old scanner did not look (on its
 * section header's line, in config.worktree, in a submodule's repository, after 256 KiB of
 * config, in the repository `env -C` runs git in), and the command does not run; with no policy
 * the same `git status` runs the planted command (so the refusal is what kept it from running).
 * attack-38b F3: `git log --help` runs git help's `man.<tool>.cmd` the same way.
 * The workspace is mounted `rw` and owned by the sandbox user, so git does not stop at
 * safe.directory (as in issue13.test.ts).
 */
import { execFileSync } from "node:child_process";
import { appendFile, chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import { expectRefusalPrevents, policyExec, shippedPolicyPath } from "../../helpers/policy-exec.js";

const ci = shippedPolicyPath("ci");
const FSMONITOR = '"touch /workspace/pwned; false"';
const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    encoding: "utf8",
  });

describeEngine("attack-37 F1: an allowed git status runs no core.fsmonitor the check cannot see", () => {
  let ws: string;
  beforeEach(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-gitcfg-"));
    await writeFile(join(ws, "README.md"), "hello\n");
    git(ws, "init", "-q");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "init");
  });
  afterEach(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  const run = policyExec({ workspace: () => ws, mode: "rw", tenant: "test-gitcfg" });

  /** A nested repository `sub` whose own config sets core.fsmonitor. */
  const nestedRepo = async () => {
    const sub = join(ws, "sub");
    execFileSync("git", ["init", "-q", sub]);
    await writeFile(join(sub, "a"), "a\n");
    git(sub, "add", "-A");
    git(sub, "commit", "-qm", "sub");
    git(sub, "config", "core.fsmonitor", "touch /workspace/pwned; false");
  };

  it.each([
    [
      "on its section header's line",
      "git status --short",
      () => appendFile(join(ws, ".git", "config"), `[core] fsmonitor = ${FSMONITOR}\n`),
      `(core.fsmonitor = ${FSMONITOR} in /workspace/.git/config)`,
    ],
    [
      "in config.worktree",
      "git status --short",
      async () => {
        git(ws, "config", "extensions.worktreeConfig", "true");
        await writeFile(join(ws, ".git", "config.worktree"), `[core]\n\tfsmonitor = ${FSMONITOR}\n`);
      },
      `(core.fsmonitor = ${FSMONITOR} in /workspace/.git/config.worktree)`,
    ],
    [
      "after 256 KiB of config",
      "git status --short",
      () =>
        appendFile(
          join(ws, ".git", "config"),
          `[core]\n${`# ${"x".repeat(98)}\n`.repeat(2700)}\tfsmonitor = ${FSMONITOR}\n`,
        ),
      "/workspace/.git/config is longer than 262144 bytes, so it was not read whole",
    ],
    [
      "in a submodule's repository",
      "git status --short",
      async () => {
        await nestedRepo();
        git(ws, "add", "sub");
        await writeFile(join(ws, ".gitmodules"), '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n');
        git(ws, "add", ".gitmodules");
        git(ws, "commit", "-qm", "submodule");
      },
      `(core.fsmonitor = ${FSMONITOR} in /workspace/sub/.git/config)`,
    ],
    [
      "in the repository env -C runs git in",
      "env -C sub git status --short",
      nestedRepo,
      "Tool call refused",
    ],
  ])("core.fsmonitor %s: `%s` is refused under ci and runs nothing", async (_where, command, plant, why) => {
    await plant();
    execFileSync("chown", ["-R", "1000:1000", ws]);
    await chmod(ws, 0o777);
    await expectRefusalPrevents(run, { policy: ci, command, reason: why, effect: join(ws, "pwned") });
  });
  it("attack-38b F3: git help's viewer command (`git log --help`) is refused under ci and runs nothing", async () => {
    git(ws, "config", "man.viewer", "x");
    git(ws, "config", "man.x.cmd", "touch /workspace/pwned; true");
    execFileSync("chown", ["-R", "1000:1000", ws]);
    await chmod(ws, 0o777);
    await expectRefusalPrevents(run, {
      policy: ci,
      command: "git log --help",
      reason: '(man.cmd = "touch /workspace/pwned; true" in /workspace/.git/config)',
      effect: join(ws, "pwned"),
    });
  });
});
