/** `warden exec`, `replay`, `diff` and `apply` run in-process (as src/cli/main.ts would), output captured. */
import { Command } from "commander";
import { vi } from "vitest";
import { registerApply } from "../../src/cli/commands/apply.js";
import { registerDiff } from "../../src/cli/commands/diff.js";
import { registerExec } from "../../src/cli/commands/exec.js";
import { registerReplay } from "../../src/cli/commands/replay.js";

export interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs `warden <argv>` in-process (as src/cli/main.ts would) and captures its output and exit status. */
export async function warden(argv: string[]): Promise<CliRun> {
  const program = new Command("warden").exitOverride();
  for (const register of [registerExec, registerReplay, registerDiff, registerApply]) register(program);
  const out: string[] = [];
  const err: string[] = [];
  const outSpy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  process.exitCode = undefined;
  let exitCode: number;
  try {
    await program.parseAsync(argv, { from: "user" });
    exitCode = Number(process.exitCode ?? 0);
  } catch (e) {
    err.push(String(e));
    exitCode = 2;
  } finally {
    outSpy.mockRestore();
    errSpy.mockRestore();
    process.exitCode = undefined;
  }
  return { stdout: out.join(""), stderr: err.join(""), exitCode };
}
