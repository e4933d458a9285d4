import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotFoundError } from "../../../src/errors.js";
import { SpillBudget } from "../../../src/session/spill-budget.js";
import {
  createSpillStore,
  type HostSpillStore,
  SPILL_HOLD_BYTES,
  SPILL_QUEUE_MAX_BYTES,
} from "../../../src/session/spill-store.js";

let parent: string;
let store: HostSpillStore;
const hostPath = (s: HostSpillStore, handle: string) => s.hostPathOf(handle) as string;
const range = { kind: "bytes", offset: 0, length: 100 } as const;

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "warden-spill-test-"));
  store = createSpillStore({ dir: parent, sessionId: "s1" });
});
afterEach(async () => {
  await store.dispose();
  rmSync(parent, { recursive: true, force: true });
});

describe("HostSpillStore", () => {
  it("creates owner-only files (0600) in a private directory (0700), named to the model by a /spill/ handle", async () => {
    const w = await store.create("bash");
    w.write(Buffer.from("hello\n"));
    await w.close();
    expect(w.handle).toMatch(/^\/spill\/bash-[0-9a-f]{8}\.log$/);
    const path = hostPath(store, w.handle);
    expect(path).toBe(join(store.dir!, w.handle.slice("/spill/".length)));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(dirname(dirname(path))).toBe(parent);
    expect(await readFile(path, "utf8")).toBe("hello\n");
    expect(w.summary()).toEqual({ handle: w.handle, keptBytes: 6, totalBytes: 6 });
  });

  it("resolves only its own live handles, by exact name: no host path, traversal or other session's handle", async () => {
    const w = await store.create("bash");
    w.write(Buffer.from("mine\n"));
    const other = createSpillStore({ dir: parent, sessionId: "s2" });
    const theirs = await other.create("bash");
    theirs.write(Buffer.from("theirs\n"));
    expect(store.owns(w.handle)).toBe(true);
    expect((await store.read(w.handle, range)).data.toString()).toBe("mine\n");
    const name = w.handle.slice("/spill/".length);
    for (const forged of [
      hostPath(store, w.handle),
      `/spill/../spill/${name}`,
      `/spill/./${name}`,
      `/spill//${name}`,
      `/spill/${name}/`,
      "/spill/../../etc/passwd",
      "/spill/.owner",
      "/etc/passwd",
      theirs.handle,
    ]) {
      expect(store.owns(forged)).toBe(false);
      await expect(store.read(forged, range)).rejects.toBeInstanceOf(NotFoundError);
    }
    await expect(store.read(theirs.handle, range)).rejects.toThrow(
      `Spill file not found: ${theirs.handle}. A spill handle is valid only in the session whose result named it, until that session closes.`,
    );
    await other.dispose();
  });

  it("never follows a symlink put in place of a spill file", async () => {
    const w = await store.create("bash");
    await w.close();
    const path = hostPath(store, w.handle);
    rmSync(path);
    symlinkSync("/etc/passwd", path);
    await expect(store.read(w.handle, range)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reads line and byte ranges with Sandbox.readFile's contract", async () => {
    const w = await store.create("bash");
    w.write(Buffer.from(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")));
    await w.close();
    const lines = await store.read(w.handle, { kind: "lines", startLine: 1001, maxLines: 3, maxBytes: 100 });
    expect(lines.data.toString()).toBe("1001\n1002\n1003\n");
    expect(lines.totalLines).toBe(3000);
    const bytes = await store.read(w.handle, { kind: "bytes", offset: 2, length: 4 });
    expect(bytes.data.toString()).toBe("2\n3\n");
    expect(bytes.totalBytes).toBe(13_893);
  });

  it("discard deletes a file and forgets it; dispose removes everything and is idempotent", async () => {
    const a = await store.create("bash");
    const b = await store.create("bash");
    const aPath = hostPath(store, a.handle);
    await a.discard();
    expect(existsSync(aPath)).toBe(false);
    expect(store.owns(a.handle)).toBe(false);
    await b.close();
    const dir = store.dir!;
    await store.dispose();
    await store.dispose();
    expect(existsSync(dir)).toBe(false);
    expect(store.owns(b.handle)).toBe(false);
    await expect(store.create("bash")).rejects.toThrow(/disposed/);
  });

  it("rejects a session id that could escape the directory", () => {
    expect(() => createSpillStore({ sessionId: "../x" })).toThrow(/sessionId/);
  });
});

describe("spill caps", () => {
  it("the session cap defaults to 256 MiB", async () => {
    const w = await store.create("bash");
    w.write(Buffer.alloc(1));
    expect(store.usedBytes).toBe(1);
    w.write(Buffer.alloc(256 * 1024 * 1024));
    expect(w.summary()).toEqual({
      handle: w.handle,
      keptBytes: 256 * 1024 * 1024,
      totalBytes: 256 * 1024 * 1024 + 1,
      cappedBy: { scope: "session", limitBytes: 268_435_456, raiseHint: "the session option spillMaxBytes" },
    });
    await w.close();
    expect(statSync(hostPath(store, w.handle)).size).toBe(268_435_456);
  });

  it("a file keeps the output's first bytes up to the session cap, counted over all the session's files", async () => {
    const s = createSpillStore({
      dir: parent,
      sessionId: "s3",
      maxBytes: 10,
      maxBytesHint: "--spill-max-bytes",
    });
    const a = await s.create("bash");
    a.write(Buffer.from("0123"));
    const b = await s.create("bash");
    b.write(Buffer.from("abcd"));
    b.write(Buffer.from("efgh"));
    b.write(Buffer.from("ij")); // nothing more is kept once a chunk was cut: the file stays a prefix
    await b.close();
    expect(await readFile(hostPath(s, b.handle), "utf8")).toBe("abcdef");
    expect(b.summary()).toEqual({
      handle: b.handle,
      keptBytes: 6,
      totalBytes: 10,
      cappedBy: { scope: "session", limitBytes: 10, raiseHint: "--spill-max-bytes" },
    });
    expect(s.usedBytes).toBe(10);
    // Discarding a file gives its bytes back.
    await a.discard();
    expect(s.usedBytes).toBe(6);
    const c = await s.create("bash");
    c.write(Buffer.from("0123456789"));
    expect(c.summary().keptBytes).toBe(4);
    await s.dispose();
  });

  it("a tenant budget is shared by its sessions and freed when one closes", async () => {
    const tenant = new SpillBudget("tenant", 12, "quotas.spillBytes");
    const one = createSpillStore({ dir: parent, sessionId: "t1", maxBytes: 8, shared: tenant });
    const two = createSpillStore({ dir: parent, sessionId: "t2", maxBytes: 8, shared: tenant });
    const a = await one.create("bash");
    a.write(Buffer.alloc(10));
    expect(a.summary()).toMatchObject({
      keptBytes: 8,
      totalBytes: 10,
      cappedBy: { scope: "session", limitBytes: 8 },
    });
    const b = await two.create("bash");
    b.write(Buffer.alloc(10));
    expect(b.summary()).toEqual({
      handle: b.handle,
      keptBytes: 4,
      totalBytes: 10,
      cappedBy: { scope: "tenant", limitBytes: 12, raiseHint: "quotas.spillBytes" },
    });
    expect(tenant.usedBytes).toBe(12);
    await b.close(); // writes within SPILL_QUEUE_MAX_BYTES land in the background
    expect(statSync(hostPath(two, b.handle)).size).toBe(4);
    await one.dispose();
    expect(tenant.usedBytes).toBe(4);
    const c = await two.create("bash");
    c.write(Buffer.alloc(10));
    expect(c.summary()).toMatchObject({ keptBytes: 4, cappedBy: { scope: "session", limitBytes: 8 } });
    expect(tenant.usedBytes).toBe(8);
    await two.dispose();
    expect(tenant.usedBytes).toBe(0);
  });

  it("a file still written to when its session closes takes no more bytes from the tenant", async () => {
    const tenant = new SpillBudget("tenant", 100, "quotas.spillBytes");
    const s = createSpillStore({ dir: parent, sessionId: "late", shared: tenant });
    const w = await s.create("bash");
    w.write(Buffer.alloc(4));
    await s.dispose();
    expect(tenant.usedBytes).toBe(0);
    w.write(Buffer.alloc(4));
    await w.close();
    await w.discard();
    expect(tenant.usedBytes).toBe(0);
    expect(w.summary()).toMatchObject({ keptBytes: 4, totalBytes: 8 });
  });

  it("a cap of 0 keeps nothing; a negative cap is refused naming how to set it", async () => {
    const none = createSpillStore({ dir: parent, sessionId: "z", maxBytes: 0 });
    const w = await none.create("bash");
    w.write(Buffer.from("x"));
    expect(w.summary()).toMatchObject({ keptBytes: 0, totalBytes: 1, cappedBy: { limitBytes: 0 } });
    await w.discard();
    expect(readdirSync(none.dir!)).toEqual([".owner"]);
    await none.dispose();
    expect(() =>
      createSpillStore({ sessionId: "n", maxBytes: -1, maxBytesHint: "--spill-max-bytes" }),
    ).toThrow(
      "The session spill cap must be a non-negative integer of bytes, got -1; set --spill-max-bytes.",
    );
  });
});

describe("spill files made only when needed", () => {
  it("output under 64 KiB that is discarded never makes a file; a kept one is made by close", async () => {
    expect(SPILL_HOLD_BYTES).toBe(64 * 1024);
    const small = await store.create("bash");
    small.write(Buffer.alloc(SPILL_HOLD_BYTES - 1, 0x61));
    await new Promise((r) => setTimeout(r, 20));
    expect(readdirSync(store.dir!)).toEqual([".owner"]);
    await small.discard();
    expect(readdirSync(store.dir!)).toEqual([".owner"]);
    const kept = await store.create("bash");
    kept.write(Buffer.from("cut\n"));
    expect(existsSync(hostPath(store, kept.handle))).toBe(false);
    await kept.close();
    expect(await readFile(hostPath(store, kept.handle), "utf8")).toBe("cut\n");
    expect(statSync(hostPath(store, kept.handle)).mode & 0o777).toBe(0o600);
  });

  it("64 KiB of output makes the file in the background; discard then removes it", async () => {
    const w = await store.create("bash");
    w.write(Buffer.alloc(SPILL_HOLD_BYTES, 0x62));
    await expect.poll(() => existsSync(hostPath(store, w.handle))).toBe(true);
    await w.discard();
    expect(readdirSync(store.dir!)).toEqual([".owner"]);
  });

  it("discard removes only a file its writer made: one already at its path (EEXIST) stays", async () => {
    const w = await store.create("bash");
    const path = hostPath(store, w.handle);
    writeFileSync(path, "not ours\n");
    w.write(Buffer.alloc(SPILL_HOLD_BYTES, 0x62));
    await w.discard();
    expect(readFileSync(path, "utf8")).toBe("not ours\n");
    expect(w.summary()).toMatchObject({ keptBytes: 0, error: expect.stringMatching(/^EEXIST/) });
  });

  it("a file that cannot be made is a write error in the summary, not a throw", async () => {
    const w = await store.create("bash");
    rmSync(store.dir!, { recursive: true });
    w.write(Buffer.from("lost\n"));
    await w.close();
    expect(w.summary()).toMatchObject({
      keptBytes: 0,
      totalBytes: 5,
      error: expect.stringMatching(/^ENOENT/),
    });
  });
});

describe("background spill writes", () => {
  it("queue up to 8 MiB per file; at the bound write returns a promise (backpressure), never writing in place", async () => {
    expect(SPILL_QUEUE_MAX_BYTES).toBe(8 * 1024 * 1024);
    const w = await store.create("bash");
    const MiB = 1024 * 1024;
    for (let i = 0; i < 7; i++) expect(w.write(Buffer.alloc(MiB, 0x61))).toBeUndefined();
    const full = w.write(Buffer.alloc(MiB + 1, 0x62));
    expect(full).toBeInstanceOf(Promise);
    // Past the bound too: queued (the caller was told to wait), the same promise, nothing written in place.
    expect(w.write(Buffer.from("c"))).toBe(full);
    await full;
    expect(w.write(Buffer.from("d"))).toBeUndefined(); // room again
    await w.close();
    const data = await readFile(hostPath(store, w.handle));
    expect(data.length).toBe(8 * MiB + 3);
    expect(data.subarray(7 * MiB - 1, 7 * MiB + 1).toString()).toBe("ab");
    expect(data.subarray(-3).toString()).toBe("bcd");
  });

  it("keeps the output's bytes in order whether or not the producer waits, and read waits for them", async () => {
    const w = await store.create("bash");
    const pieces: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      const piece = Buffer.alloc(i % 7 === 3 ? 3 * 1024 * 1024 : 1024 * 1024, 0x61 + (i % 26));
      pieces.push(piece);
      const full = w.write(piece);
      if (full && i % 2 === 0) await full; // some waits honoured, some not: order and bytes are the same
    }
    const expected = Buffer.concat(pieces);
    const tail = await store.read(w.handle, { kind: "bytes", offset: expected.length - 5, length: 5 });
    expect(tail.data.toString()).toBe(expected.subarray(-5).toString());
    await w.close();
    expect((await readFile(hostPath(store, w.handle))).equals(expected)).toBe(true);
    expect(w.summary()).toEqual({
      handle: w.handle,
      keptBytes: expected.length,
      totalBytes: expected.length,
    });
  });

  it("a full queue's promise resolves when the session closes the file, and a capped write returns none", async () => {
    const s = createSpillStore({ dir: parent, sessionId: "r", maxBytes: 9 * 1024 * 1024 });
    const w = await s.create("bash");
    const full = w.write(Buffer.alloc(SPILL_QUEUE_MAX_BYTES));
    expect(full).toBeInstanceOf(Promise);
    await s.dispose();
    await full;
    expect(w.write(Buffer.alloc(2 * 1024 * 1024))).toBeUndefined(); // released: nothing kept, nothing to wait for
    const c = await store.create("bash");
    await c.close();
  });

  it("a session closed while writes are queued gives every byte back and closes the file after them", async () => {
    const tenant = new SpillBudget("tenant", 64 * 1024 * 1024, "quotas.spillBytes");
    const s = createSpillStore({ dir: parent, sessionId: "q", shared: tenant });
    const w = await s.create("bash");
    for (let i = 0; i < 6; i++) w.write(Buffer.alloc(1024 * 1024));
    await s.dispose();
    expect(tenant.usedBytes).toBe(0);
    w.write(Buffer.alloc(10));
    await w.close();
    expect(tenant.usedBytes).toBe(0);
    expect(w.summary()).toMatchObject({ keptBytes: 6 * 1024 * 1024, totalBytes: 6 * 1024 * 1024 + 10 });
  });
});
