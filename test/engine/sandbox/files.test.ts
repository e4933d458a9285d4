/** File operations inside the sandbox: ranges, atomic writes, stat, realpath, listDir. */
import { chmod, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { compareListingNames, createSandbox } from "../../../src/sandbox/index.js";
import { listingPool } from "../../../src/sandbox/listing-sort.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { EXEC_PATHS, leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("files");

for (const execPath of EXEC_PATHS) {
  describeEngine(`DockerSandbox file operations (${execPath})`, () => {
    let sb: Sandbox;
    let bigDir: string;
    beforeAll(async () => {
      bigDir = await mkdtemp(join(tmpdir(), "warden-big-"));
      await chmod(bigDir, 0o755);
      const fh = await open(join(bigDir, "big.bin"), "w");
      await fh.truncate(2 ** 31);
      await fh.write(Buffer.from("tail"), 0, 4, 2 ** 31);
      await fh.close();
      // 256 MiB of memory: a read that loaded the 2 GiB file would be killed, not slow.
      sb = await createSandbox({
        execPath,
        tenant,
        limits: { memoryBytes: 256 * 1024 * 1024 },
        mounts: [{ hostPath: bigDir, containerPath: "/big" }],
      });
      await sb.writeFile("lines.txt", Buffer.from("one\ntwo\nthree\nfour"));
    });
    afterAll(async () => {
      await sb?.destroy();
      await rm(bigDir, { recursive: true, force: true });
      expect(await leftovers(tenant)).toEqual([]);
    });

    it("reads byte ranges and line ranges with totals", async () => {
      expect(await sb.readFile("lines.txt", { kind: "bytes", offset: 4, length: 5 })).toEqual({
        data: Buffer.from("two\nt"),
        totalBytes: 18,
      });
      expect(
        await sb.readFile("/workspace/lines.txt", {
          kind: "lines",
          startLine: 2,
          maxLines: 2,
          maxBytes: 100,
        }),
      ).toEqual({ data: Buffer.from("two\nthree\n"), totalBytes: 18, totalLines: 4 });
      const capped = await sb.readFile("lines.txt", {
        kind: "lines",
        startLine: 1,
        maxLines: 10,
        maxBytes: 6,
      });
      expect(capped.data.toString()).toBe("one\ntw");
      const past = await sb.readFile("lines.txt", { kind: "bytes", offset: 100, length: 5 });
      expect(past.data.length).toBe(0);
    });

    it("reads a range of a 2 GiB file without loading it (its speed: npm run bench fast-path)", async () => {
      // A sparse 2 GiB host file, mounted read-only: no tmpfs memory is spent on it.
      const r = await sb.readFile("/big/big.bin", { kind: "bytes", offset: 2 ** 31, length: 100 });
      expect(r).toEqual({ data: Buffer.from("tail"), totalBytes: 2 ** 31 + 4 });
      const head = await sb.readFile("/big/big.bin", {
        kind: "lines",
        startLine: 1,
        maxLines: 10,
        maxBytes: 16,
      });
      expect(head.data).toEqual(Buffer.alloc(16));
      expect(head.totalBytes).toBe(2 ** 31 + 4);
      expect(head.totalLines).toBe(1);
    });

    it("writes atomically with modes, creating parents and keeping the old mode", async () => {
      await sb.writeFile("deep/er/x.sh", Buffer.from("#!/bin/sh\n"), { mode: 0o755 });
      expect(await sb.stat("deep/er/x.sh")).toMatchObject({ type: "file", size: 10, mode: 0o755 });
      await sb.writeFile("deep/er/x.sh", Buffer.from("#!/bin/sh\necho\n"));
      expect(await sb.stat("deep/er/x.sh")).toMatchObject({ size: 15, mode: 0o755 });
      await sb.writeFile("plain.txt", Buffer.from(""));
      expect(await sb.stat("plain.txt")).toMatchObject({ type: "file", size: 0, mode: 0o644 });
      const owner = await run(
        sb,
        "find deep plain.txt -printf '%U %p\\n'; ls -a deep/er | grep -c warden-tmp; true",
      );
      // Owned by the sandbox's own uid (above 262143: the archive API's tar carries it as PAX records).
      const u = sb.info.uid;
      expect(owner.stdout).toBe(`${u} deep\n${u} deep/er\n${u} deep/er/x.sh\n${u} plain.txt\n0\n`);
      await expect(sb.writeFile("deep", Buffer.from("x"))).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });

    it("stat has lstat semantics; realpath resolves symlinks of the existing prefix", async () => {
      await run(sb, "mkdir -p real/dir && ln -s real/dir lnk && ln -s /etc esc");
      expect(await sb.stat("lnk")).toMatchObject({ type: "symlink", size: 8, mode: 0o777 });
      expect(await sb.stat("real")).toMatchObject({ type: "directory", mode: 0o755 });
      expect(await sb.stat("nope")).toBeNull();
      const st = await sb.stat("lines.txt");
      expect(Math.abs((st?.mtimeMs ?? 0) - Date.now())).toBeLessThan(120_000);
      expect(await sb.realpath("lnk/new/file.txt")).toBe("/workspace/real/dir/new/file.txt");
      expect(await sb.realpath("esc/passwd")).toBe("/etc/passwd");
      expect(await sb.realpath("real/../lines.txt")).toBe("/workspace/lines.txt");
    });

    it("lists directories with any names, and maps missing paths to NotFoundError", async () => {
      await run(sb, "mkdir -p ls && cd ls && touch .hidden 'new\nline' && mkdir d && ln -s d l");
      const entries = (await sb.listDir("ls")).sort((a, b) => (a.name < b.name ? -1 : 1));
      expect(entries).toEqual([
        { name: ".hidden", type: "file" },
        { name: "d", type: "directory" },
        { name: "l", type: "symlink" },
        { name: "new\nline", type: "file" },
      ]);
      await expect(sb.listDir("missing")).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(sb.listDir("lines.txt")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(sb.readFile("missing.txt", { kind: "bytes", offset: 0, length: 1 })).rejects.toMatchObject(
        {
          code: "NOT_FOUND",
        },
      );
      await expect(sb.readFile("ls", { kind: "bytes", offset: 0, length: 1 })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    });

    it("gives listDirSorted's head in ls order from a listing too large to sort here (the worker pool)", async () => {
      // 12,000 names, mixed case and non-ASCII: the listing is over LISTING_INLINE_MAX_BYTES on both paths.
      await run(
        sb,
        'mkdir -p many && cd many && for i in $(seq 1 4000); do echo "f$i-a-long-enough-name" "F$i-a-long-enough-name.txt" "Ä$i-a-long-enough-name"; done | xargs touch && mkdir dir1 && ln -s dir1 Link',
      );
      const all = await sb.listDir("many");
      expect(all).toHaveLength(12_002);
      const sorted = [...all].sort((a, b) => compareListingNames(a.name, b.name));
      const pool = vi.spyOn(listingPool(), "run");
      const listing = await sb.listDirSorted("many", { first: 700, headBytes: 2_000, maxSymlinks: 16 });
      expect(pool).toHaveBeenCalledTimes(1);
      pool.mockRestore();
      expect(listing.total).toBe(12_002);
      expect(listing.head.length + listing.rest.count).toBe(700);
      expect(listing.head).toEqual(sorted.slice(0, listing.head.length));
      expect(listing.rest.last).toEqual(sorted[699]);
      await expect(
        sb.listDirSorted("missing", { first: 1, headBytes: 1, maxSymlinks: 1 }),
      ).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    });
  });
}
