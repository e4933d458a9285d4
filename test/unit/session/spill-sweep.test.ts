import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSpillStore } from "../../../src/session/spill-store.js";
import { sweepSpillDirs } from "../../../src/session/spill-sweep.js";

/** A pid above Linux's pid_max (2^22): never a live process. */
const DEAD = `${hostname()}:999999999`;
let parent: string;

/** A spill directory named like a session's, with `owner` in its .owner file (none when undefined). */
function spillDir(name: string, owner?: string): string {
  const dir = join(parent, `warden-spill-${name}-abc123`);
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, "bash-1.log"), "output\n");
  if (owner !== undefined) writeFileSync(join(dir, ".owner"), `${owner}\n`);
  return dir;
}

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "warden-sweep-test-"));
});
afterEach(() => {
  rmSync(parent, { recursive: true, force: true });
});

describe("sweepSpillDirs (warden gc)", () => {
  it("a spill store names its owner, this process, in the directory's .owner", async () => {
    const store = createSpillStore({ dir: parent, sessionId: "s1" });
    await store.create("bash");
    expect(await readFile(join(store.dir!, ".owner"), "utf8")).toBe(`${hostname()}:${process.pid}\n`);
    expect(await sweepSpillDirs({ dir: parent })).toEqual([]);
    await store.dispose();
  });

  it("removes exactly the directories whose owner process on this host is gone", async () => {
    const dead = spillDir("dead", DEAD);
    spillDir("live", `${hostname()}:${process.pid}`);
    spillDir("other-host", "elsewhere.example:1");
    spillDir("serve", `serve@${hostname()}-0123456789ab`);
    spillDir("no-owner");
    symlinkSync(dead, join(parent, "warden-spill-link-abc123"));
    mkdirSync(join(parent, "unrelated"));
    writeFileSync(join(parent, "unrelated", ".owner"), DEAD);

    expect(await sweepSpillDirs({ dir: parent, dryRun: true })).toEqual([{ path: dead, owner: DEAD }]);
    expect(readdirSync(parent)).toHaveLength(7);
    expect(await sweepSpillDirs({ dir: parent })).toEqual([{ path: dead, owner: DEAD }]);
    expect(readdirSync(parent).sort()).toEqual([
      "unrelated",
      "warden-spill-link-abc123",
      "warden-spill-live-abc123",
      "warden-spill-no-owner-abc123",
      "warden-spill-other-host-abc123",
      "warden-spill-serve-abc123",
    ]);
  });

  it("a missing parent directory is nothing to sweep", async () => {
    expect(await sweepSpillDirs({ dir: join(parent, "absent") })).toEqual([]);
  });
});
