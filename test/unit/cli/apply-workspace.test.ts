/**
 * `warden apply <saved patch>` applies to the workspace the patch records (not the current
 * directory), refuses when that directory is gone or moved, and `--workspace` overrides.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runApply } from "../../../src/cli/commands/apply.js";
import { readWorkspaceHeader } from "../../../src/review/index.js";
import { omitUndefined } from "../../../src/util/index.js";
import { recordIdentity, sessionPatch } from "../../helpers/session-patch.js";

/** Runs `warden apply` in-process; its output and exit code. */
async function apply(file: string, flags: { workspace?: string } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((c) => out.push(String(c)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((c) => err.push(String(c)) > 0);
  process.exitCode = undefined;
  try {
    await runApply(file, flags);
    return { stdout: out.join(""), stderr: err.join(""), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  }
}

afterEach(() => vi.restoreAllMocks());

describe("warden apply <saved patch>", () => {
  it("applies to the workspace the patch records, not the current directory", async () => {
    const { ws, patch } = await sessionPatch();
    expect(process.cwd()).not.toBe(ws);
    const run = await apply(patch);
    expect(run).toEqual({
      stdout: `Applied ${patch} to ${ws}: 1 written, 0 deleted.\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("two\n");
  });

  it("refuses when the recorded workspace moved (exit 2, nothing written); --workspace overrides", async () => {
    const { ws, patch } = await sessionPatch();
    renameSync(ws, `${ws}-moved`);
    const recorded = readWorkspaceHeader(readFileSync(patch, "utf8"));
    const run = await apply(patch);
    expect(run).toEqual({
      stdout: "",
      stderr: `warden: ${patch} records the workspace ${ws} (${recordIdentity(recorded)}), but ${ws} is gone. Nothing was applied. To apply it to another directory, name it: warden apply ${patch} --workspace DIR.\n`,
      exitCode: 2,
    });
    expect(readFileSync(join(`${ws}-moved`, "a.txt"), "utf8")).toBe("one\n");
    const forced = await apply(patch, { workspace: `${ws}-moved` });
    expect(forced.exitCode).toBe(0);
    expect(readFileSync(join(`${ws}-moved`, "a.txt"), "utf8")).toBe("two\n");
  });
});

describe("warden apply <transcript>", () => {
  it("applies the run's saved patch to the workspace it records", async () => {
    const { ws, patch, out } = await sessionPatch();
    const transcript = join(out, "run.jsonl");
    writeFileSync(transcript, `${JSON.stringify({ warden: "run_start", workspace: ws })}\n`);
    renameSync(patch, `${transcript}.patch`);
    renameSync(`${patch}.base`, `${transcript}.patch.base`);
    const run = await apply(transcript);
    expect(run).toEqual({
      stdout: `Applied ${transcript}.patch to ${ws}: 1 written, 0 deleted.\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("two\n");
  });

  it("takes the workspace from run_start when the patch has no record line, and checks it", async () => {
    const { ws, patch, out } = await sessionPatch();
    const recorded = readWorkspaceHeader(readFileSync(patch, "utf8"));
    const transcript = join(out, "run.jsonl");
    writeFileSync(
      transcript,
      `${JSON.stringify({ warden: "run_start", workspace: ws, workspaceId: { dev: recorded?.dev, ino: recorded?.ino } })}\n`,
    );
    const text = readFileSync(patch, "utf8");
    writeFileSync(`${transcript}.patch`, text.slice(text.indexOf("diff --git")));
    renameSync(`${patch}.base`, `${transcript}.patch.base`);
    renameSync(ws, `${ws}-moved`);
    const refused = await apply(transcript);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe(
      `warden: ${transcript} records the workspace ${ws} (${recordIdentity(omitUndefined({ dev: recorded?.dev, ino: recorded?.ino }))}), but ${ws} is gone. Nothing was applied. To apply it to another directory, name it: warden apply ${transcript} --workspace DIR.\n`,
    );
    renameSync(`${ws}-moved`, ws);
    expect((await apply(transcript)).exitCode).toBe(0);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("two\n");
  });
});
