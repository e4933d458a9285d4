/**
 * attack-37 F1, proved live: a read-only `git status`, allowed by the shipped `ci` policy, is
 * refused when git would run a `core.fsmonitor` planted where the old scanner did not look (on its
 * section header's line, in config.worktree, in a submodule's repository, after 256 KiB of
 * config, in the repository `env -C` runs git in), and the command does not run; with no policy
 * the same `git status` runs the planted command (so the refusal is what kept it from running).
 * The workspace is mounted `rw` and owned by the sandbox user, so git does not stop at
 * safe.directory (as in issue13.test.ts).
 */
import { execFileSync } from "node:child_process";
import { appendFile, chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { registerExec } from "../../../src/cli/commands/exec.js";
import { ALLOW_ALL_NOTICE } from "../../helpers/cli-policy.js";
import { describeEngine } from "../../helpers/engine.js";

/** Runs `warden exec <argv>` in-process; its exit status and stderr. */
async function wardenExec(argv: string[]): Promise<{ stderr: string; exitCode: number }> {
  const program = new Command("warden").exitOverride();
  registerExec(program);
  const err: string[] = [];
  const outSpy = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  process.exitCode = undefined;
  try {
    await program.parseAsync(["exec", ...argv, "--tenant", "test-gitcfg"], { from: "user" });
    return { stderr: err.join(""), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
    process.exitCode = undefined;
  }
}

const ci = new URL("../../../policies/ci.yaml", import.meta.url).pathname;
const FSMONITOR = '"touch /workspace/pwned; false"';
const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );
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

  const run = (policy: string | null, command: string) =>
    wardenExec([
      "--policy",
      policy ?? "allow-all",
      "bash",
      JSON.stringify({ command }),
      "-w",
      ws,
      "-m",
      "rw",
    ]);

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
    const refused = await run(ci, command);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(why);
    expect(await exists(join(ws, "pwned"))).toBe(false);
    expect((await run(null, command)).stderr).toBe(ALLOW_ALL_NOTICE);
    expect(await exists(join(ws, "pwned"))).toBe(true);
  });
});
