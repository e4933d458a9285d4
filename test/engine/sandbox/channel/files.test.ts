/** File operations over warden-helper against a real engine: ranges, atomic writes, lstat, realpath -m, listings. */
import tar from "tar-stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError } from "../../../../src/errors.js";
import {
  channelListDir,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelUntar,
  channelWriteFile,
} from "../../../../src/sandbox/channel/index.js";
import { omitUndefined } from "../../../../src/util/index.js";
import { channelTenant, type HelperBox, runOn, startHelperBox } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers } from "../../../helpers/sandbox-fixture.js";

const tenant = channelTenant("files");

describeEngine("channel file operations", () => {
  let box: HelperBox;
  const sh = async (script: string) => {
    const r = await runOn(box.client, script, { cwd: "/tmp" });
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };
  beforeAll(async () => {
    box = await startHelperBox(tenant);
  });
  afterAll(async () => {
    await box?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("writes atomically with mkdir -p, mode 0644 by default, keeping an existing mode", async () => {
    await channelWriteFile(box.client, "/tmp/w/a/b/f.txt", Buffer.from("one\n"));
    expect(await sh("stat -c '%a %u %s' /tmp/w/a/b/f.txt; stat -c %a /tmp/w/a; ls -A /tmp/w/a/b")).toBe(
      "644 1000 4\n755\nf.txt\n",
    );
    await channelWriteFile(box.client, "/tmp/w/x.sh", Buffer.from("#!/bin/sh\n"), { mode: 0o755 });
    await channelWriteFile(box.client, "/tmp/w/x.sh", Buffer.from("#!/bin/sh\necho\n"));
    expect(await sh("stat -c %a /tmp/w/x.sh; cat /tmp/w/x.sh")).toBe("755\n#!/bin/sh\necho\n");
    await channelWriteFile(box.client, "/tmp/w/secret", Buffer.from("s"), { mode: 0o600 });
    expect(await sh("stat -c %a /tmp/w/secret")).toBe("600\n");
    await expect(channelWriteFile(box.client, "/tmp/w/a", Buffer.from("x"))).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it("reads byte ranges without reading past the end", async () => {
    await channelWriteFile(box.client, "/tmp/r/bytes", Buffer.from("0123456789"));
    expect(
      await channelReadFile(box.client, "/tmp/r/bytes", { kind: "bytes", offset: 3, length: 4 }),
    ).toEqual({
      data: Buffer.from("3456"),
      totalBytes: 10,
    });
    const tail = await channelReadFile(box.client, "/tmp/r/bytes", { kind: "bytes", offset: 8, length: 100 });
    expect(tail.data.toString()).toBe("89");
    const past = await channelReadFile(box.client, "/tmp/r/bytes", { kind: "bytes", offset: 50, length: 5 });
    expect(past).toEqual({ data: Buffer.alloc(0), totalBytes: 10 });
  });

  it("reads line ranges with line and byte caps and counts lines as wc -l (+1 for an unterminated last line)", async () => {
    await sh("seq 1 1000 > /tmp/r/seq; printf 'a\\nb' > /tmp/r/open; : > /tmp/r/empty");
    const r = await channelReadFile(box.client, "/tmp/r/seq", {
      kind: "lines",
      startLine: 10,
      maxLines: 3,
      maxBytes: 100,
    });
    expect(r).toEqual({ data: Buffer.from("10\n11\n12\n"), totalBytes: 3893, totalLines: 1000 });
    const capped = await channelReadFile(box.client, "/tmp/r/seq", {
      kind: "lines",
      startLine: 1,
      maxLines: 100,
      maxBytes: 7,
    });
    expect(capped.data.toString()).toBe("1\n2\n3\n4");
    const open = await channelReadFile(box.client, "/tmp/r/open", {
      kind: "lines",
      startLine: 2,
      maxLines: 5,
      maxBytes: 100,
    });
    expect(open).toEqual({ data: Buffer.from("b"), totalBytes: 3, totalLines: 2 });
    const empty = await channelReadFile(box.client, "/tmp/r/empty", {
      kind: "lines",
      startLine: 1,
      maxLines: 5,
      maxBytes: 100,
    });
    expect(empty).toEqual({ data: Buffer.alloc(0), totalBytes: 0, totalLines: 0 });
    const past = await channelReadFile(box.client, "/tmp/r/seq", {
      kind: "lines",
      startLine: 2000,
      maxLines: 5,
      maxBytes: 100,
    });
    expect(past).toEqual({ data: Buffer.alloc(0), totalBytes: 3893, totalLines: 1000 });
  });

  it("case 18: a line read of a 48 MiB file returns the head quickly with the exact totals", async () => {
    await sh("yes abcdefghijklmnop | head -c 50331648 > /tmp/r/big.log");
    const r = await channelReadFile(box.client, "/tmp/r/big.log", {
      kind: "lines",
      startLine: 1,
      maxLines: 2000,
      maxBytes: 51_200,
    });
    expect(r.data.length).toBe(2000 * 17);
    expect(r.totalBytes).toBe(50_331_648);
    expect(r.totalLines).toBe(Math.ceil(50_331_648 / 17));
  });

  it("missing files are NotFoundError; directories are InvalidArgumentError", async () => {
    await expect(
      channelReadFile(box.client, "/tmp/nope", { kind: "bytes", offset: 0, length: 1 }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      channelReadFile(box.client, "/tmp", { kind: "bytes", offset: 0, length: 1 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(channelListDir(box.client, "/tmp/nope")).rejects.toBeInstanceOf(NotFoundError);
    await expect(channelListDir(box.client, "/tmp/r/seq")).rejects.toThrow(
      "/tmp/r/seq is not a directory; pass a directory path.",
    );
  });

  it("lstat: types, permission bits, size; null for nothing", async () => {
    await sh(
      "mkdir -p /tmp/s && printf abc > /tmp/s/f && chmod 0640 /tmp/s/f && ln -sfn /etc /tmp/s/link && ln -sfn /gone /tmp/s/dangling",
    );
    expect(await channelStat(box.client, "/tmp/s/f")).toMatchObject({ type: "file", size: 3, mode: 0o640 });
    expect(await channelStat(box.client, "/tmp/s")).toMatchObject({ type: "directory" });
    expect(await channelStat(box.client, "/tmp/s/link")).toMatchObject({ type: "symlink" });
    expect(await channelStat(box.client, "/tmp/s/dangling")).toMatchObject({ type: "symlink" });
    expect(await channelStat(box.client, "/tmp/s/none")).toBeNull();
    expect(await channelStat(box.client, "/tmp/s/f/under-a-file")).toBeNull();
    expect(await channelStat(box.client, "/dev/null")).toMatchObject({ type: "other" });
    const mtime = (await channelStat(box.client, "/tmp/s/f"))!.mtimeMs;
    expect(Math.abs(mtime - Date.now())).toBeLessThan(60_000);
  });

  it("case 1: realpath resolves symlinks like realpath -m (missing tails appended)", async () => {
    await sh(
      "mkdir -p /tmp/p/real/sub && ln -sfn /etc/passwd /tmp/p/leak && ln -sfn /etc /tmp/p/etcdir && ln -sfn real /tmp/p/rel && ln -sfn loop2 /tmp/p/loop1 && ln -sfn loop1 /tmp/p/loop2",
    );
    const rp = (p: string) => channelRealpath(box.client, p);
    expect(await rp("/tmp/p/leak")).toBe("/etc/passwd");
    expect(await rp("/tmp/p/etcdir/hostname")).toBe("/etc/hostname");
    expect(await rp("/tmp/p/rel/sub")).toBe("/tmp/p/real/sub");
    expect(await rp("/tmp/p/rel/missing/deeper")).toBe("/tmp/p/real/missing/deeper");
    // `..` is applied to the path as given first (as the docker-exec path's posix.resolve does).
    expect(await rp("/tmp/p/etcdir/../tmp")).toBe("/tmp/p/tmp");
    expect(await rp("/tmp/p/real/sub/../../leak")).toBe("/etc/passwd");
    expect(await sh("realpath -m /tmp/p/etcdir/hostname /tmp/p/rel/missing/deeper")).toBe(
      "/etc/hostname\n/tmp/p/real/missing/deeper\n",
    );
    await expect(rp("/tmp/p/loop1")).rejects.toThrow(/ELOOP|too many/i);
  });

  it("lists a directory with dotfiles and each entry's own type", async () => {
    await sh(
      "mkdir -p /tmp/l/d && touch /tmp/l/.hidden /tmp/l/f && ln -sfn d /tmp/l/ln && printf x > '/tmp/l/new\nline'",
    );
    const entries = (await channelListDir(box.client, "/tmp/l")).sort((a, b) => a.name.localeCompare(b.name));
    expect(entries).toEqual([
      { name: ".hidden", type: "file" },
      { name: "d", type: "directory" },
      { name: "f", type: "file" },
      { name: "ln", type: "symlink" },
      { name: "new\nline", type: "file" },
    ]);
  });

  it("runs file operations concurrently with commands on one channel", async () => {
    let slowDone = false;
    const slow = runOn(box.client, "sleep 1; echo slow").finally(() => {
      slowDone = true;
    });
    await Promise.all(
      [1, 2, 3, 4].map((i) => channelWriteFile(box.client, `/tmp/c/${i}`, Buffer.from(String(i)))),
    );
    const reads = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        channelReadFile(box.client, `/tmp/c/${i}`, { kind: "bytes", offset: 0, length: 9 }),
      ),
    );
    expect(reads.map((r) => r.data.toString())).toEqual(["1", "2", "3", "4"]);
    // Served while the command still runs: file operations never queue behind a command.
    expect(slowDone).toBe(false);
    expect((await slow).stdout).toBe("slow\n");
  });

  it("extracts a tar archive as the sandbox user with modes, symlinks and empty dirs; refuses escapes", async () => {
    const archive = async (
      entries: {
        name: string;
        type?: "directory" | "symlink";
        mode?: number;
        body?: string;
        linkname?: string;
      }[],
    ) => {
      const pack = tar.pack();
      for (const e of entries)
        pack.entry(
          {
            name: e.name,
            type: e.type ?? "file",
            mode: e.mode ?? 0o644,
            ...omitUndefined({ linkname: e.linkname }),
          },
          e.body ?? "",
        );
      pack.finalize();
      const chunks: Buffer[] = [];
      for await (const c of pack) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const good = await archive([
      { name: "d/", type: "directory", mode: 0o755 },
      { name: "d/run.sh", mode: 0o755, body: "#!/bin/sh\n" },
      { name: "secret", mode: 0o600, body: "s" },
      { name: "empty/", type: "directory", mode: 0o700 },
      { name: "link", type: "symlink", linkname: "d/run.sh" },
      { name: `ü-\u00e9-long-name-${"x".repeat(150)}`, body: "u" },
    ]);
    await channelUntar(box.client, "/tmp/u", good);
    expect(
      await sh("cd /tmp/u && stat -c '%n %a %u' d d/run.sh secret empty && readlink link && ls | wc -l"),
    ).toBe("d 755 1000\nd/run.sh 755 1000\nsecret 600 1000\nempty 700 1000\nd/run.sh\n5\n");
    const evil = await archive([{ name: "../escape", body: "x" }]);
    await expect(channelUntar(box.client, "/tmp/u2", evil)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await sh("ls /tmp/escape 2>&1 | wc -l; test -e /tmp/escape && echo present || echo absent")).toBe(
      "1\nabsent\n",
    );
  });
});
