/**
 * Each entry of an edit's `edits` scans the whole file on the controller's event loop, so one call's
 * entries times the file's size is bounded (MAX_EDIT_SCAN_BYTES): 1,000 entries on a 14 MiB file held
 * the event loop for 12 s, stalling every other session of the process.
 */
import { describe, expect, it } from "vitest";
import { createEditTool, MAX_EDIT_SCAN_BYTES } from "../../../src/tools/edit.js";
import type { SpillStore } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const spill = {} as SpillStore;
const MiB = 1024 * 1024;
const marker = (i: number) => `m${String(i).padStart(7, "0")}`;

/** A file of exactly 1 MiB holding `n` unique markers, one per line, then padding. */
function oneMiB(n: number): string {
  const head = Array.from({ length: n }, (_, i) => `${marker(i)}\n`).join("");
  return `${head}${"x".repeat(MiB - head.length - 1)}\n`;
}

describe("edit: work bound per call", () => {
  it("refuses more entries than edits × file size allows, naming the most for that size; the file is unchanged", async () => {
    const text = oneMiB(600);
    const sb = new FakeSandbox().file("/workspace/big.txt", text);
    const edits = Array.from({ length: 513 }, (_, i) => ({ oldText: marker(i), newText: "X" }));
    const err = await createEditTool()
      .execute("c", { path: "big.txt", edits }, { sandbox: sb, spill })
      .catch((e: unknown) => e as Error);
    expect([MAX_EDIT_SCAN_BYTES, (err as Error).message]).toEqual([
      512 * MiB,
      "513 edits of big.txt (1048576 bytes) is more than one edit call may check: at most 512 edits for a file " +
        "this size (edits × file size <= 536870912 bytes). Split them into several edit calls; nothing was changed.",
    ]);
    expect(sb.bytes("/workspace/big.txt")?.toString()).toBe(text);
  });

  it("runs the most entries the bound allows", async () => {
    const sb = new FakeSandbox().file("/workspace/big.txt", oneMiB(600));
    const edits = Array.from({ length: 512 }, (_, i) => ({ oldText: marker(i), newText: "X" }));
    const out = await createEditTool().execute("c", { path: "big.txt", edits }, { sandbox: sb, spill });
    expect(out.content).toEqual([{ type: "text", text: "Successfully replaced 512 block(s) in big.txt." }]);
  });
});
