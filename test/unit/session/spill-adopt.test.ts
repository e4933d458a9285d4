/**
 * Issue 37 item 10: the spill store of a session a restarted server adopts takes the dead
 * process's spill directory over (its handles read again, its bytes counted, its `.owner` this
 * process), so the sweep keeps it; disposing the store removes it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { adoptSpillStore } from "../../../src/session/spill-adopt.js";
import { SpillBudget } from "../../../src/session/spill-budget.js";
import { createSpillStore } from "../../../src/session/spill-store.js";
import { sweepSpillDirs } from "../../../src/session/spill-sweep.js";

/** A pid above Linux's pid_max (2^22): never a live process. */
const DEAD = `${hostname()}:999999999`;
let parent: string;

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "warden-adopt-test-"));
});
afterEach(() => {
  rmSync(parent, { recursive: true, force: true });
});

/** A store of a dead process for `sessionId` with one kept file holding `text`; its handle and directory. */
async function leftBehind(sessionId: string, text: string): Promise<{ handle: string; dir: string }> {
  const store = createSpillStore({ dir: parent, sessionId, owner: DEAD });
  const writer = await store.create("bash");
  writer.write(Buffer.from(text));
  await writer.close();
  return { handle: writer.summary().handle, dir: store.dir! };
}

describe("adoptSpillStore", () => {
  it("reads the dead process's spill files again, counts their bytes, and removes them on dispose", async () => {
    const { handle, dir } = await leftBehind("s1", "1\n2\n3\n");
    const other = await leftBehind("s1-abcdef", "other\n");
    const shared = new SpillBudget("tenant", 1024, "quotas.spillBytes");
    const store = await adoptSpillStore({ dir: parent, sessionId: "s1", shared });
    expect(store.dir).toBe(dir);
    expect(store.owns(handle)).toBe(true);
    expect(store.owns(other.handle)).toBe(false);
    expect(store.usedBytes).toBe(6);
    expect(shared.usedBytes).toBe(6);
    expect((await store.read(handle, { kind: "bytes", offset: 2, length: 4 })).data.toString()).toBe(
      "2\n3\n",
    );
    expect(await readFile(join(dir, ".owner"), "utf8")).toBe(`${hostname()}:${process.pid}\n`);
    // The sweep (warden gc, warden serve's start) leaves it: its owner is alive; the other one goes.
    expect((await sweepSpillDirs({ dir: parent })).map((r) => r.path)).toEqual([other.dir]);
    // Later files go into the same directory.
    const more = await store.create("grep");
    more.write(Buffer.from("x"));
    await more.close();
    expect(readdirSync(dir).sort()).toHaveLength(3);
    await store.dispose();
    expect(existsSync(dir)).toBe(false);
    expect(shared.usedBytes).toBe(0);
  });

  it("the sweep keeps the directories of the live sessions it is given, even of a dead owner", async () => {
    const { dir } = await leftBehind("live", "x\n");
    const gone = await leftBehind("gone", "y\n");
    const removed = await sweepSpillDirs({ dir: parent, liveSessions: new Set(["live"]) });
    expect(removed).toEqual([{ path: gone.dir, owner: DEAD }]);
    expect(existsSync(dir)).toBe(true);
  });
});
