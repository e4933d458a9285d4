/** A copy-mode workspace over its size limit is refused before anything is copied, naming the limit and the flag. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sessionOptionsOf } from "../../../src/cli/flags/session-flags.js";
import { resolveSandboxOptions } from "../../../src/sandbox/options.js";
import { measureWorkspace } from "../../../src/sandbox/workspace-size.js";

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-size-"));
  writeFileSync(join(dir, "big.bin"), Buffer.alloc(10_000));
  mkdirSync(join(dir, "data"));
  writeFileSync(join(dir, "data/x.bin"), Buffer.alloc(100_000));
  return dir;
}

describe("copy-mode workspace size", () => {
  it("sizes files in whole 4 KiB pages, skipping what is excluded", async () => {
    const dir = workspace();
    expect(await measureWorkspace(dir)).toEqual({ bytes: 12288 + 4096 + 102400, files: 2 });
    expect(await measureWorkspace(dir, (p) => p === "data/")).toEqual({ bytes: 12288, files: 1 });
  });

  it("refuses before copying, naming the size, the limit and --workspace-size", async () => {
    const dir = workspace();
    await expect(
      resolveSandboxOptions(
        {
          workspace: { hostPath: dir, mode: "copy" },
          limits: { workspaceBytes: 64 * 1024 },
        },
        "s1",
      ),
    ).rejects.toThrow(
      `The workspace ${dir} takes about 116.0KB in the sandbox (2 files), over the copy-mode workspace limit of 64.0KB ` +
        "(limits.workspaceBytes; CLI: --workspace-size). Raise the limit, leave large paths out (--exclude, .wardenignore), or use --mode ro. Nothing was copied.",
    );
    await expect(
      resolveSandboxOptions(
        {
          workspace: { hostPath: dir, mode: "copy", exclude: ["data/"] },
          limits: { workspaceBytes: 64 * 1024 },
        },
        "s1",
      ),
    ).resolves.toMatchObject({ workspaceMode: "copy" });
  });

  it("the CLI has flags for the session limits", async () => {
    const options = await sessionOptionsOf({
      cpus: 2,
      memory: 2 * 1024 ** 3,
      workspaceSize: 4 * 1024 ** 3,
      pids: 512,
      tmpSize: 1024 ** 2,
    });
    expect(options.sandbox?.limits).toEqual({
      cpus: 2,
      memoryBytes: 2 * 1024 ** 3,
      workspaceBytes: 4 * 1024 ** 3,
      pids: 512,
      tmpBytes: 1024 ** 2,
    });
  });
});
