/**
 * A saved session patch records its workspace (path, device, inode) in a first line that git apply
 * skips; the check refuses a directory that is gone or another one at its path.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkWorkspaceRecord,
  readWorkspaceHeader,
  workspaceHeader,
  workspaceRecordOf,
} from "../../../src/review/index.js";
import { fresh, sessionPatch } from "../../helpers/session-patch.js";

describe("the workspace record of a saved patch", () => {
  it("is the patch's first line, read back exactly; git apply skips it", async () => {
    const { ws, patch, out } = await sessionPatch();
    const st = statSync(ws, { bigint: true });
    const text = readFileSync(patch, "utf8");
    expect(text.split("\n")[0]).toBe(
      `warden-workspace: {"path":${JSON.stringify(ws)},"dev":"${st.dev}","ino":"${st.ino}"}`,
    );
    expect(readWorkspaceHeader(text)).toEqual({ path: ws, dev: String(st.dev), ino: String(st.ino) });
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
      message: `s.patch records the workspace ${ws} (device ${recorded.dev}, inode ${recorded.ino}), but ${ws} is gone. Nothing was applied. To apply it to another directory, name it: warden apply s.patch --workspace DIR.`,
    });
    mkdirSync(ws);
    const now = await workspaceRecordOf(ws);
    await expect(checkWorkspaceRecord(recorded, "s.patch")).rejects.toMatchObject({
      code: "CONFLICT",
      message: `s.patch records the workspace ${ws} (device ${recorded.dev}, inode ${recorded.ino}), but ${ws} is now another directory (device ${now.dev}, inode ${now.ino}): the one the session copied was moved or replaced. Nothing was applied. To apply it to another directory, name it: warden apply s.patch --workspace DIR.`,
    });
  });
});
