import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PathOutsideWorkspaceError } from "../../../src/errors.js";
import { createSpillStore, type HostSpillStore } from "../../../src/session/spill-store.js";
import { createReadTool } from "../../../src/tools/read.js";
import type { ToolContent } from "../../../src/tools/types.js";
import { emitting, FakeSandbox } from "../../helpers/fake-sandbox.js";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");

let sandbox: FakeSandbox;
let spill: HostSpillStore;
let spillParent: string;
const read = createReadTool();
const text = (content: ToolContent[]) => (content[0]?.type === "text" ? content[0].text : "");
const run = (args: { path: string; offset?: number; limit?: number }) =>
  read.execute("call-1", args, { sandbox, spill });

beforeEach(async () => {
  sandbox = await FakeSandbox.create();
  spillParent = mkdtempSync(join(tmpdir(), "warden-read-spill-"));
  spill = createSpillStore({ dir: spillParent, sessionId: "read" });
});
afterEach(async () => {
  await sandbox.destroy();
  await spill.dispose();
  rmSync(spillParent, { recursive: true, force: true });
});

describe("read tool", () => {
  it("case 12: keeps tabs as literal U+0009", async () => {
    await sandbox.put("t.go", "f() {\n\treturn 1\n}\n");
    const out = await run({ path: "t.go" });
    expect(text(out.content)).toBe("f() {\n\treturn 1\n}\n");
    expect(text(out.content)).toContain("\u0009return 1");
  });

  it("case 10: never shows a UTF-8 BOM, and keeps 'ö' intact", async () => {
    await sandbox.put("b.txt", Buffer.from("\xef\xbb\xbfhello\nw\xc3\xb6rld\n", "latin1"));
    const out = await run({ path: "b.txt" });
    expect(text(out.content)).toBe("hello\nwörld\n");
  });

  it("cuts at 2000 lines with Pi's footer and continue offset", async () => {
    await sandbox.put("n.txt", numbered(3000));
    const out = await run({ path: "n.txt" });
    expect(text(out.content)).toBe(
      `${numbered(2000).slice(0, -1)}\n\n[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]`,
    );
    const next = await run({ path: "n.txt", offset: 2001 });
    expect(text(next.content)).toBe(numbered(3000).slice(numbered(2000).length));
  });

  it("cuts at 50 KiB with the byte-limit footer", async () => {
    await sandbox.put("w.txt", `${"x".repeat(99)}\n`.repeat(1000));
    const out = await run({ path: "w.txt" });
    expect(
      text(out.content).endsWith(
        "\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]",
      ),
    ).toBe(true);
  });

  it("offset and limit: 'N more lines in file' notice", async () => {
    await sandbox.put("n.txt", numbered(10));
    const out = await run({ path: "n.txt", offset: 3, limit: 2 });
    expect(text(out.content)).toBe("3\n4\n\n[6 more lines in file. Use offset=5 to continue.]");
  });

  it("offset past the end is an error with the total", async () => {
    await sandbox.put("n.txt", numbered(10));
    await expect(run({ path: "n.txt", offset: 11 })).rejects.toThrow(
      "Offset 11 is beyond end of file (10 lines total)",
    );
  });

  it("a first line over 50 KiB gives Pi 0.73.1's note with the line's size and a suggested command", async () => {
    await sandbox.put("long.txt", `${"a".repeat(61_440)}\nb\n`);
    // The line's size is measured in the sandbox (awk, bytes); the fake answers as awk would.
    sandbox.execScript = emitting(["61440\n"]);
    const out = await run({ path: "long.txt" });
    expect(text(out.content)).toBe(
      "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' long.txt | head -c 51200]",
    );
    expect(sandbox.commands).toEqual([
      { argv: ["awk", "NR == 1 { print length($0); exit }", "/workspace/long.txt"] },
    ]);
  });

  it("finds a file stored in NFD from its NFC name, as Pi 0.73.1 does (found by test/pi)", async () => {
    await sandbox.put("cafe\u0301.txt", "stored in NFD\n");
    const out = await run({ path: "caf\u00e9.txt" });
    expect(text(out.content)).toBe("stored in NFD\n");
    await expect(run({ path: "cafe.txt" })).rejects.toThrow("File not found: cafe.txt");
  });

  it("tries a screenshot name's narrow no-break space, then a curly apostrophe, as Pi 0.73.1 does", async () => {
    await sandbox.put("Shot 10.12.01\u202fAM.png.txt", "shot\n");
    await sandbox.put("Capture d\u2019\u00e9cran.txt", "capture\n");
    expect(text((await run({ path: "Shot 10.12.01 AM.png.txt" })).content)).toBe("shot\n");
    expect(text((await run({ path: "Capture d'\u00e9cran.txt" })).content)).toBe("capture\n");
  });

  it("returns a png (by magic bytes, whatever the name) as image content", async () => {
    await sandbox.put("logo.dat", PNG_1X1);
    const out = await run({ path: "logo.dat" });
    expect(out.content).toEqual([
      { type: "text", text: "Read image file [image/png]" },
      { type: "image", data: PNG_1X1.toString("base64"), mimeType: "image/png" },
    ]);
  });

  it("case 16: refuses a binary file with a 'binary file' error", async () => {
    await sandbox.put("prog", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00]));
    await expect(run({ path: "prog" })).rejects.toThrow(/binary file/);
  });

  it("reports invalid UTF-8 bytes it replaced", async () => {
    await sandbox.put("latin1.txt", Buffer.from("caf\xe9\n", "latin1"));
    const out = await run({ path: "latin1.txt" });
    expect(text(out.content)).toBe("caf\uFFFD\n\n[1 invalid UTF-8 or NUL byte replaced with U+FFFD]");
  });

  it("refuses a symlink leading outside the workspace (confinement, unlike Pi)", async () => {
    sandbox.symlink("leak", "/etc/passwd");
    await expect(run({ path: "leak" })).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
    await expect(run({ path: "/etc/passwd" })).rejects.toBeInstanceOf(PathOutsideWorkspaceError);
  });

  it("reads the session's spill files by handle from the host store, and only those", async () => {
    const w = await spill.create("bash");
    w.write(Buffer.from(numbered(3000)));
    await w.close();
    const out = await run({ path: w.handle, offset: 2999 });
    expect(text(out.content)).toBe("2999\n3000\n");
    expect(out.details).toEqual({ spill: true });
    expect(text((await run({ path: `@${w.handle}`, limit: 1 })).content)).toBe(
      "1\n\n[2999 more lines in file. Use offset=2 to continue.]",
    );
    // The host path is not a handle: it is a sandbox path, outside the workspace.
    await expect(run({ path: spill.hostPathOf(w.handle)! })).rejects.toBeInstanceOf(
      PathOutsideWorkspaceError,
    );
    await expect(run({ path: join(spill.dir!, "other.log") })).rejects.toBeInstanceOf(
      PathOutsideWorkspaceError,
    );
  });

  it("a forged spill handle (traversal, another session's, unknown) is a not-found error", async () => {
    const w = await spill.create("bash");
    w.write(Buffer.from("mine\n"));
    const other = createSpillStore({ dir: spillParent, sessionId: "other" });
    const theirs = await other.create("bash");
    theirs.write(Buffer.from("theirs\n"));
    const name = w.handle.slice("/spill/".length);
    for (const forged of [
      theirs.handle,
      `/spill/../spill/${name}`,
      "/spill/../../etc/passwd",
      "/spill/.owner",
    ]) {
      await expect(run({ path: forged })).rejects.toThrow(
        `Spill file not found: ${forged}. A spill handle is valid only in the session whose result named it, until that session closes.`,
      );
    }
    await other.dispose();
  });

  it("rejects a directory and a missing file with messages naming the fix", async () => {
    await sandbox.put("d/x", "1");
    await expect(run({ path: "d" })).rejects.toThrow(
      "Cannot read 'd': it is a directory. Use ls to list it.",
    );
    await expect(run({ path: "nope.txt" })).rejects.toThrow("File not found: nope.txt");
  });
});
