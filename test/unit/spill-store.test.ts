import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotFoundError } from "../../src/errors.js";
import { createSpillStore, type HostSpillStore } from "../../src/session/spill-store.js";

let parent: string;
let store: HostSpillStore;

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "warden-spill-test-"));
  store = createSpillStore({ dir: parent, sessionId: "s1" });
});
afterEach(async () => {
  await store.dispose();
  rmSync(parent, { recursive: true, force: true });
});

describe("HostSpillStore", () => {
  it("creates owner-only files (0600) in a private directory (0700)", async () => {
    const w = await store.create("bash");
    w.write(Buffer.from("hello\n"));
    await w.close();
    expect(statSync(w.path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(w.path)).mode & 0o777).toBe(0o700);
    expect(dirname(dirname(w.path))).toBe(parent);
    expect(await readFile(w.path, "utf8")).toBe("hello\n");
  });

  it("owns only its live files, by resolved path", async () => {
    const w = await store.create("bash");
    expect(store.owns(w.path)).toBe(true);
    expect(
      store.owns(`${dirname(w.path)}/../${dirname(w.path).split("/").pop()}/${w.path.split("/").pop()}`),
    ).toBe(true);
    expect(store.owns(join(dirname(w.path), "other.log"))).toBe(false);
    expect(store.owns("/etc/passwd")).toBe(false);
    await expect(store.read("/etc/passwd", { kind: "bytes", offset: 0, length: 10 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("reads line and byte ranges with Sandbox.readFile's contract", async () => {
    const w = await store.create("bash");
    w.write(Buffer.from(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")));
    await w.close();
    const lines = await store.read(w.path, { kind: "lines", startLine: 1001, maxLines: 3, maxBytes: 100 });
    expect(lines.data.toString()).toBe("1001\n1002\n1003\n");
    expect(lines.totalLines).toBe(3000);
    const bytes = await store.read(w.path, { kind: "bytes", offset: 2, length: 4 });
    expect(bytes.data.toString()).toBe("2\n3\n");
    expect(bytes.totalBytes).toBe(13_893);
  });

  it("discard deletes a file and forgets it; dispose removes everything and is idempotent", async () => {
    const a = await store.create("bash");
    const b = await store.create("bash");
    await a.discard();
    expect(existsSync(a.path)).toBe(false);
    expect(store.owns(a.path)).toBe(false);
    await b.close();
    const dir = store.dir!;
    await store.dispose();
    await store.dispose();
    expect(existsSync(dir)).toBe(false);
    expect(store.owns(b.path)).toBe(false);
    await expect(store.create("bash")).rejects.toThrow(/disposed/);
  });

  it("caps a file at maxFileBytes", async () => {
    const small = createSpillStore({ dir: parent, sessionId: "s2", maxFileBytes: 10 });
    const w = await small.create("bash");
    w.write(Buffer.from("0123456"));
    w.write(Buffer.from("789abc"));
    await w.close();
    expect(await readFile(w.path, "utf8")).toBe("0123456789");
    await small.dispose();
  });

  it("rejects a session id that could escape the directory", () => {
    expect(() => createSpillStore({ sessionId: "../x" })).toThrow(/sessionId/);
  });
});
