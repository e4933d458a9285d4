/**
 * A saved session patch records its workspace (path, device, inode) in a first line that git apply
 * skips; the check refuses a directory that is gone or another one at its path.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkWorkspaceRecord,
  readWorkspaceHeader,
  workspaceHeader,
  workspaceRecordOf,
} from "../../../src/review/index.js";
import { fresh, recordIdentity, sessionPatch } from "../../helpers/session-patch.js";

describe("the workspace record of a saved patch", () => {
  it("is the patch's first line, read back exactly; git apply skips it", async () => {
    const { ws, patch, out } = await sessionPatch();
    const st = statSync(ws, { bigint: true });
    const text = readFileSync(patch, "utf8");
    expect(text.split("\n")[0]).toBe(
      `warden-workspace: {"path":${JSON.stringify(ws)},"dev":"${st.dev}","ino":"${st.ino}","born":"${st.birthtimeNs}"}`,
    );
    expect(readWorkspaceHeader(text)).toEqual({
      path: ws,
      dev: String(st.dev),
      ino: String(st.ino),
      born: String(st.birthtimeNs),
    });
    const copy = join(out, "copy");
    mkdirSync(copy);
    writeFileSync(join(copy, "a.txt"), "one\n");
    execFileSync("git", ["apply", patch], {
      cwd: copy,
      env: { ...process.env, GIT_CEILING_DIRECTORIES: out },
    });
    expect(readFileSync(join(copy, "a.txt"), "utf8")).toBe("two\n");
  });

  it("holds any path (JSON), and is only read before the first diff --git line", () => {
    const record = { path: "/w/a\nb", dev: "18446744073709551615", ino: "7" };
    expect(readWorkspaceHeader(workspaceHeader(record))).toEqual(record);
    const born = { ...record, born: "1796608440562268922" };
    expect(readWorkspaceHeader(workspaceHeader(born))).toEqual(born);
    expect(readWorkspaceHeader(`diff --git a/x b/x\n${workspaceHeader(record)}`)).toBeUndefined();
  });

  it("checkWorkspaceRecord: gone is NOT_FOUND, another directory at the path is CONFLICT, naming both", async () => {
    const ws = join(fresh(), "ws");
    mkdirSync(ws);
    const recorded = await workspaceRecordOf(ws);
    await expect(checkWorkspaceRecord(recorded, "s.patch")).resolves.toBeUndefined();
    renameSync(ws, `${ws}-moved`);
    await expect(checkWorkspaceRecord(recorded, "s.patch")).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: `s.patch records the workspace ${ws} (${recordIdentity(recorded)}), but ${ws} is gone. Nothing was applied. To apply it to another directory, name it: warden apply s.patch --workspace DIR.`,
    });
    mkdirSync(ws);
    const now = await workspaceRecordOf(ws);
    await expect(checkWorkspaceRecord(recorded, "s.patch")).rejects.toMatchObject({
      code: "CONFLICT",
      message: `s.patch records the workspace ${ws} (${recordIdentity(recorded)}), but ${ws} is now another directory (${recordIdentity(now)}): the one the session copied was moved or replaced. Nothing was applied. To apply it to another directory, name it: warden apply s.patch --workspace DIR.`,
    });
  });

  it("checkWorkspaceRecord: a directory deleted and made again at once is another one, though ext4 gives it the same inode number", async () => {
    const ws = join(fresh(), "ws");
    mkdirSync(ws);
    const recorded = await workspaceRecordOf(ws);
    rmSync(ws, { recursive: true });
    mkdirSync(ws);
    const now = await workspaceRecordOf(ws);
    expect(now.born).toBeDefined(); // the test file system keeps birth times (ext4, tmpfs, overlayfs)
    expect(now.born).not.toBe(recorded.born);
    await expect(checkWorkspaceRecord(recorded, "run.jsonl", "replay")).rejects.toMatchObject({
      code: "CONFLICT",
      message: `run.jsonl records the workspace ${ws} (${recordIdentity(recorded)}), but ${ws} is now another directory (${recordIdentity(now)}): the one the session copied was moved or replaced. Nothing ran. To replay it in another directory, name it: warden replay run.jsonl --workspace DIR.`,
    });
    // A record without a birth time (an older patch, or a file system without one) is judged by device and inode.
    const { born: _born, ...old } = await workspaceRecordOf(ws);
    await expect(checkWorkspaceRecord(old, "old.patch")).resolves.toBeUndefined();
  });
});
