/**
 * The workspace hash command and its parser (issue 11: a GET /changes every ~100 ms kept a
 * sandbox busy starting sh, two finds, xargs and sha256sum each time). The real command's output is
 * checked against the engine in test/engine/sandbox/workspace.test.ts (links, unicode and long names).
 */
import { mkdtemp, rm, truncate, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../src/errors.js";
import type { ExecCommand, ExecOptions } from "../../../src/sandbox/types.js";
import { hashWorkspace } from "../../../src/sandbox/workspace-changes.js";
import { packDirectory } from "../../../src/sandbox/workspace-copy.js";
import {
  HASH_COMMAND,
  HASH_MAX_FILE_BYTES,
  parseWorkspaceHashes,
} from "../../../src/sandbox/workspace-hashes.js";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

/** What `find . ( -type l -printf … ) -o ( -type f -exec sha256sum -z -- {} + )` prints. */
const OUTPUT = Buffer.from(
  [
    `${HASH_A}  ./plain.txt`,
    "Lsub/link",
    "../plain.txt",
    `${HASH_B}  ./sub/name with\nnewline and  spaces`,
    `${HASH_A}  ./ünï/L.txt`,
    "",
  ].join("\0"),
);

describe("parseWorkspaceHashes", () => {
  it("takes files by their path without find's ./ and links by their target, any name kept whole", () => {
    expect(parseWorkspaceHashes(OUTPUT)).toEqual(
      new Map([
        ["plain.txt", HASH_A],
        ["sub/link", "link:../plain.txt"],
        ["sub/name with\nnewline and  spaces", HASH_B],
        ["ünï/L.txt", HASH_A],
      ]),
    );
    expect(parseWorkspaceHashes(Buffer.alloc(0))).toEqual(new Map());
  });

  it("refuses a record of neither shape instead of leaving a file out (it would show as deleted)", () => {
    expect(() => parseWorkspaceHashes(Buffer.from(`${HASH_A}  plain.txt\0`))).toThrow(SandboxError);
    expect(() => parseWorkspaceHashes(Buffer.from(`${HASH_A.slice(0, 10)}\0`))).toThrow(
      "hashing /workspace printed a record that is neither a file nor a link",
    );
  });
});

describe("files over HASH_MAX_FILE_BYTES (16 MiB): size and mtime, never a hash of their content", () => {
  it("the command prints them as S records, which parse to meta:<size>:<whole seconds>", () => {
    expect(HASH_COMMAND.join(" ")).toContain(
      `-type f -size +${HASH_MAX_FILE_BYTES}c -printf S%P\\0%s %T@\\0`,
    );
    const output = Buffer.from(`Sbig.img\x00536870912000 1796611497.9183692990\x00${HASH_A}  ./small\x00`);
    expect(parseWorkspaceHashes(output)).toEqual(
      new Map([
        ["big.img", "meta:536870912000:1796611497"],
        ["small", HASH_A],
      ]),
    );
    expect(() => parseWorkspaceHashes(Buffer.from("Sbig.img\x00x y\x00"))).toThrow(
      "hashing /workspace printed a size record that is not '<size> <mtime>'",
    );
  });

  it("the host baseline records the same for a large file, without reading it for a hash", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-hashes-"));
    try {
      await writeFile(join(dir, "big.img"), "");
      await truncate(join(dir, "big.img"), HASH_MAX_FILE_BYTES + 1);
      await utimes(join(dir, "big.img"), 1_700_000_000.5, 1_700_000_000.5);
      await writeFile(join(dir, "edge"), Buffer.alloc(0));
      await truncate(join(dir, "edge"), HASH_MAX_FILE_BYTES);
      const packed = packDirectory(dir);
      packed.stream.resume();
      await packed.done;
      expect(packed.hashes.get("big.img")).toBe(`meta:${HASH_MAX_FILE_BYTES + 1}:1700000000`);
      expect(packed.hashes.get("edge")).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("hashWorkspace", () => {
  /** An exec that records each command and answers with `output` and `exitCode`. */
  const recordingExec = (output: Buffer, exitCode = 0) => {
    const calls: Array<{ command: ExecCommand; cwd: string | undefined }> = [];
    const exec = async (command: ExecCommand, options?: ExecOptions) => {
      calls.push({ command, cwd: options?.cwd });
      options?.onStdout?.(output);
      if (exitCode !== 0) options?.onStderr?.(Buffer.from("sha256sum: x: Permission denied\n"));
      return { exitCode, timedOut: false, aborted: false, durationMs: 1 };
    };
    return { calls, exec };
  };

  it("runs one find in /workspace, no shell (find hands the files to sha256sum itself), and parses it", async () => {
    const { calls, exec } = recordingExec(OUTPUT);
    const hashes = await hashWorkspace(exec);
    expect(hashes.get("sub/link")).toBe("link:../plain.txt");
    expect(hashes.size).toBe(4);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.cwd).toBe("/workspace");
    // One process started by the helper, find itself (no sh, no xargs), which starts sha256sum.
    expect(call?.command).toEqual({ argv: [...HASH_COMMAND] });
    expect(HASH_COMMAND[0]).toBe("find");
    expect(HASH_COMMAND.slice(-7)).toEqual(["-exec", "sha256sum", "-z", "--", "{}", "+", ")"]);
  });

  it("rejects SandboxError naming the exit and stderr when find (or a sha256sum batch) failed", async () => {
    const { exec } = recordingExec(OUTPUT, 1);
    await expect(hashWorkspace(exec)).rejects.toThrow(
      new SandboxError("hashing /workspace failed (exit 1): sha256sum: x: Permission denied"),
    );
  });
});
