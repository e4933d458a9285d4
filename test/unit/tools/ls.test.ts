import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PathOutsideWorkspaceError } from "../../../src/errors.js";
import { createSpillStore } from "../../../src/session/spill-store.js";
import { createLsTool } from "../../../src/tools/ls.js";
import type { ToolContent } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

let sandbox: FakeSandbox;
const spill = createSpillStore({ sessionId: "ls-unit" });
const ls = createLsTool();
const text = (content: ToolContent[]) => (content[0]?.type === "text" ? content[0].text : "");
const run = (args: { path?: string; limit?: number } = {}) => ls.execute("call-1", args, { sandbox, spill });

beforeEach(async () => {
  sandbox = await FakeSandbox.create();
});
afterEach(async () => {
  await sandbox.destroy();
});

describe("ls tool", () => {
  it("lists dotfiles, sorts case-insensitively, marks directories (and links to them) with '/'", async () => {
    await sandbox.put("b.txt", "");
    await sandbox.put("A.md", "");
    await sandbox.put(".env", "");
    await sandbox.put("src/x.ts", "");
    sandbox.symlink("link", "src");
    sandbox.symlink("etcdir", "/etc");
    const out = await run();
    expect(text(out.content)).toBe(".env\nA.md\nb.txt\netcdir\nlink/\nsrc/");
    expect(out.details).toBeUndefined();
  });

  it("says '(empty directory)'", async () => {
    sandbox.mkdir("empty");
    expect(text((await run({ path: "empty" })).content)).toBe("(empty directory)");
  });

  it("stops at the entry limit with Pi's notice", async () => {
    for (let i = 0; i < 5; i++) await sandbox.put(`f${i}`, "");
    const out = await run({ limit: 3 });
    expect(text(out.content)).toBe("f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]");
    expect(out.details).toEqual({ entryLimitReached: 3 });
  });

  it("applies the 50 KiB cap with its notice", async () => {
    for (let i = 0; i < 500; i++) await sandbox.put(`${String(i).padStart(3, "0")}${"n".repeat(150)}`, "");
    const out = await run();
    expect(text(out.content).endsWith("\n\n[50.0KB limit reached]")).toBe(true);
    expect(text(out.content).split("\n").length).toBe(332 + 2); // 332 names of 153 bytes + newlines = 51,127 bytes
  });

  it("errors: missing path, a file, and a path outside the workspace", async () => {
    await sandbox.put("f.txt", "");
    await expect(run({ path: "nope" })).rejects.toThrow("Path not found: /workspace/nope");
    await expect(run({ path: "f.txt" })).rejects.toThrow("Not a directory: /workspace/f.txt");
    sandbox.symlink("etcdir", "/etc");
    await expect(run({ path: "etcdir" })).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(run({ path: "/workspace-evil" })).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
  });
});
