/**
 * Live policy tests: a bash command run through `warden exec --policy …` in-process against a
 * workspace, and the two checks those tests make (refused without printing a secret; refused while
 * the same command with no policy has the effect the policy must stop).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { ALLOW_ALL_NOTICE } from "./cli-policy.js";
import { type CliRun, warden } from "./cli-run.js";

/** The absolute path of the shipped policy file policies/<name>.yaml in this checkout. */
export function shippedPolicyPath(name: string): string {
  return fileURLToPath(new URL(`../../policies/${name}.yaml`, import.meta.url));
}

/** Whether `path` on the host can be read (false for a missing file). */
export function hostFileExists(path: string): Promise<boolean> {
  return readFile(path).then(
    () => true,
    () => false,
  );
}

/** Runs one bash command under a policy file, or with no policy (`--policy allow-all`) when `policy` is null. */
export type PolicyExec = (policy: string | null, command: string) => Promise<CliRun>;

/**
 * `warden exec --policy <policy> bash '{"command": …}' -w <workspace()> -m <mode> --tenant <tenant>`
 * run in-process (test/helpers/cli-run.ts); `workspace` is read at each call, so a fixture that
 * makes a new directory per test can pass a getter.
 */
export function policyExec(options: {
  workspace: () => string;
  mode: "ro" | "rw";
  tenant: string;
}): PolicyExec {
  return (policy, command) =>
    warden([
      "exec",
      "--policy",
      policy ?? "allow-all",
      "bash",
      JSON.stringify({ command }),
      "-w",
      options.workspace(),
      "-m",
      options.mode,
      "--tenant",
      options.tenant,
    ]);
}

/** Asserts `refused` is a refusal (exit status 1, "Tool call refused") that printed nothing of `secret`; `label` names the case in a failure. */
export function expectRefusedWithoutSecret(refused: CliRun, secret: string, label = ""): void {
  expect([label, refused.exitCode]).toEqual([label, 1]);
  expect(refused.stderr).toContain("Tool call refused");
  expect(refused.stdout).not.toContain(secret);
  expect(refused.stderr).not.toContain(secret);
}

/**
 * Asserts `command` is refused under `policy` (exit status 1, stderr containing `reason`) and the
 * host file `effect` is not there; then that the same command with no policy runs (stderr only the
 * allow-all notice) and creates `effect`, so the refusal is what prevented it.
 */
export async function expectRefusalPrevents(
  run: PolicyExec,
  check: { policy: string; command: string; reason: string; effect: string },
): Promise<void> {
  const refused = await run(check.policy, check.command);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain(check.reason);
  expect(await hostFileExists(check.effect)).toBe(false);
  expect((await run(null, check.command)).stderr).toBe(ALLOW_ALL_NOTICE);
  expect(await hostFileExists(check.effect)).toBe(true);
}
