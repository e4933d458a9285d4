/**
 * A session closed while its spill files are still being made: the store's dispose waits for each
 * open on libuv's thread pool, so no file lands in the directory as it is removed (a review of the
 * lazy spill files, 2026-12-03: 3 of 300 disposes threw ENOTEMPTY and left a directory of files
 * without its `.owner`, which neither `warden gc` nor `warden serve`'s sweep would ever remove).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

/** Opens wait for `gate.open()`; the test decides when they land. */
const gate = vi.hoisted(() => {
  let waiting: Array<() => void> = [];
  return {
    get pending() {
      return waiting.length;
    },
    wait: (go: () => void) => waiting.push(go),
    open() {
      for (const go of waiting.splice(0)) go();
      waiting = [];
    },
  };
});
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    open: (...args: Parameters<typeof fs.open>) =>
      gate.wait(() => (fs.open as (...a: unknown[]) => void)(...args)),
  };
});
const { createSpillStore, SPILL_HOLD_BYTES } = await import("../../../src/session/spill-store.js");

let parent: string | undefined;
afterEach(() => {
  gate.open();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

describe("dispose while spill files are being made", () => {
  it("waits for the opens, then removes the directory with every file; the writers keep nothing", async () => {
    parent = mkdtempSync(join(tmpdir(), "warden-spill-dispose-"));
    const store = createSpillStore({ dir: parent, sessionId: "d" });
    const writers = await Promise.all(Array.from({ length: 8 }, () => store.create("bash")));
    for (const w of writers) w.write(Buffer.alloc(SPILL_HOLD_BYTES, 0x61));
    expect(gate.pending).toBe(8);
    const dir = store.dir!;
    let disposed = false;
    const disposing = store.dispose().then(() => {
      disposed = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(disposed).toBe(false); // the opens have not landed yet
    gate.open();
    await disposing;
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
    for (const w of writers) expect(w.write(Buffer.from("late"))).toBeUndefined();
  });
});
