/**
 * ls sorts as Pi does (lower-cased names, localeCompare), but a listing too large to sort quickly
 * is sorted in a worker (ls-sort.ts), so a huge directory does not stall the event loop, which a
 * server shares between tenants.
 */
import { describe, expect, it } from "vitest";
import { createLsTool } from "../../../src/tools/ls.js";
import { compareListingNames, LS_INLINE_SORT_ENTRIES, sortListing } from "../../../src/tools/ls-sort.js";
import type { SpillStore } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const spill = {} as SpillStore;
// Names in a scrambled order, mixed case and non-ASCII, so collation matters.
const names = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const k = (i * 7919) % n;
    return `${k % 3 === 0 ? "Ä" : k % 3 === 1 ? "a" : "B"}${k}`;
  });

describe("ls order", () => {
  it(`sorts a listing over ${LS_INLINE_SORT_ENTRIES} entries off the event loop, in Pi's order`, async () => {
    const n = LS_INLINE_SORT_ENTRIES + 5_000;
    const sb = new FakeSandbox();
    const all = names(n);
    for (const name of all) sb.file(`/workspace/big/${name}`, "");
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const out = await createLsTool().execute("c", { path: "big", limit: 5 }, { sandbox: sb, spill });
    // The fake sandbox answers without I/O: only a worker's reply lets the event loop turn meanwhile.
    expect(turned).toBe(true);
    const expected = [...all].sort(compareListingNames).slice(0, 5).join("\n");
    expect(out.content).toEqual([
      { type: "text", text: `${expected}\n\n[5 entries limit reached. Use limit=10 for more]` },
    ]);
  });

  it("keeps equal names in their listing order (stable), as the inline sort does", async () => {
    const entries = names(LS_INLINE_SORT_ENTRIES + 10).flatMap((name, i) => [
      { name, i },
      { name: name.toUpperCase(), i: -i },
    ]);
    const inline = [...entries].sort((a, b) => compareListingNames(a.name, b.name));
    expect((await sortListing(entries)).map((e) => e.i)).toEqual(inline.map((e) => e.i));
  });
});
