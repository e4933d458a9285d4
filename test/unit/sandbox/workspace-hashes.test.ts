/**
 * The workspace hash command and its parser (issue 11: a GET /changes every ~100 ms kept a
 * sandbox busy starting sh, two finds, xargs and sha256sum each time). The real command's output is
 * checked against the engine in test/engine/sandbox/workspace.test.ts (links, unicode and long names).
 */
import { describe, expect, it } from "vitest";
import { SandboxError } from "../../../src/errors.js";
import type { ExecCommand, ExecOptions } from "../../../src/sandbox/types.js";
import { hashWorkspace } from "../../../src/sandbox/workspace-changes.js";
import { HASH_COMMAND, parseWorkspaceHashes } from "../../../src/sandbox/workspace-hashes.js";

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
