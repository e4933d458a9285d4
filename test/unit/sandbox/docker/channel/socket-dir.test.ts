/**
 * The channel socket's host directories (socket-dir.ts): which base, which checks make one safe to
 * use, who owns a sandbox's directory, when the socket is off, and what gc sweeps. Runs as root in
 * CI (the directories are chowned to a sandbox's gid).
 */
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm, symlink, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { InvalidArgumentError } from "../../../../../src/errors.js";
import {
  channelSocketBase,
  createSocketDir,
  DEFAULT_CHANNEL_BASE,
  ensureBase,
  isMissingBindSource,
  resetChannelSocketState,
  SOCKET_DIR_SWEEP_AGE_MS,
  socketDirFor,
  socketDirOf,
  sweepSocketDirs,
} from "../../../../../src/sandbox/docker/channel/socket-dir.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
beforeEach(() => resetChannelSocketState());

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "warden-socket-dir-test-"));
  dirs.push(dir);
  return dir;
}

const localEngine = { modem: { socketPath: "/var/run/docker.sock" } } as unknown as Docker;
const remoteEngine = { modem: { host: "10.0.0.2", port: 2376 } } as unknown as Docker;

describe("channelSocketBase", () => {
  it("is /run/warden-channels when WARDEN_CHANNEL_DIR is unset or empty", () => {
    expect(channelSocketBase({})).toBe(DEFAULT_CHANNEL_BASE);
    expect(channelSocketBase({ WARDEN_CHANNEL_DIR: "" })).toBe("/run/warden-channels");
  });

  it("is off for none, and normalises an absolute path", () => {
    expect(channelSocketBase({ WARDEN_CHANNEL_DIR: "none" })).toBeUndefined();
    expect(channelSocketBase({ WARDEN_CHANNEL_DIR: "/srv//x/../channels/" })).toBe("/srv/channels");
  });

  it("refuses a relative path, naming the variable and the fix", () => {
    expect(() => channelSocketBase({ WARDEN_CHANNEL_DIR: "run/ch" })).toThrow(
      new InvalidArgumentError(
        'WARDEN_CHANNEL_DIR must be an absolute path or "none" (got "run/ch"); unset it for /run/warden-channels.',
      ),
    );
  });
});

describe("ensureBase (assertOnlyOursPath)", () => {
  it("makes a missing base 0711, owned by this process", async () => {
    const base = join(await tempDir(), "a", "channels");
    await ensureBase(base);
    const info = await lstat(base);
    expect({ uid: info.uid, mode: (info.mode & 0o777).toString(8) }).toEqual({
      uid: process.getuid?.(),
      mode: "711",
    });
  });

  it("refuses a link, a base others may write, and one another uid owns", async () => {
    const root = await tempDir();
    await mkdir(join(root, "real"));
    await symlink(join(root, "real"), join(root, "link"));
    await expect(ensureBase(join(root, "link"))).rejects.toThrow(`${root}/link is not a directory`);
    await mkdir(join(root, "open"));
    await chmod(join(root, "open"), 0o777);
    await expect(ensureBase(join(root, "open"))).rejects.toThrow(
      `${root}/open is writable by others (mode 777)`,
    );
    await mkdir(join(root, "theirs"), { mode: 0o755 });
    await chown(join(root, "theirs"), 1000, 1000);
    await expect(ensureBase(join(root, "theirs"))).rejects.toThrow(
      `${root}/theirs is owned by uid 1000, not by root or this process (0)`,
    );
  });

  it("refuses a base under a directory another user owns or may write (they could swap it for theirs)", async () => {
    const root = await tempDir();
    await mkdir(join(root, "alice"));
    await chown(join(root, "alice"), 1000, 1000);
    await expect(ensureBase(join(root, "alice", "channels"))).rejects.toThrow(
      `${root}/alice is owned by uid 1000, not by root or this process (0)`,
    );
    expect(await readdir(join(root, "alice"))).toEqual([]); // checked before anything is made
    await mkdir(join(root, "shared"), { mode: 0o775 });
    await chmod(join(root, "shared"), 0o775);
    await expect(ensureBase(join(root, "shared", "channels"))).rejects.toThrow(
      `${root}/shared is writable by others (mode 775)`,
    );
    // A sticky ancestor (as /tmp, where tempDir is) is fine: others cannot rename root's entries.
    await expect(ensureBase(join(root, "ok", "channels"))).resolves.toBeUndefined();
  });
});

describe("createSocketDir", () => {
  it("makes <base>/<16 hex>, owned by root with the sandbox's gid as group, mode 0710", async () => {
    const base = await tempDir();
    const dir = await createSocketDir(base, 43210);
    expect(dir).toMatch(new RegExp(`^${base}/[0-9a-f]{16}$`));
    const info = await lstat(dir);
    expect({ uid: info.uid, gid: info.gid, mode: (info.mode & 0o777).toString(8) }).toEqual({
      uid: 0,
      gid: 43210,
      mode: "710",
    });
  });
});

describe("socketDirFor", () => {
  it("is off for WARDEN_CHANNEL_DIR=none, an engine on another host, gVisor and a host user's gid, and makes nothing", async () => {
    const base = await tempDir();
    const logged: string[] = [];
    const log = (m: string) => logged.push(m);
    expect(
      await socketDirFor(localEngine, { gid: 43210 }, log, { WARDEN_CHANNEL_DIR: "none" }),
    ).toBeUndefined();
    expect(
      await socketDirFor(remoteEngine, { gid: 43210 }, log, { WARDEN_CHANNEL_DIR: base }),
    ).toBeUndefined();
    expect(
      await socketDirFor(localEngine, { gid: 43210, runtime: "runsc" }, log, { WARDEN_CHANNEL_DIR: base }),
    ).toBeUndefined();
    expect(
      await socketDirFor(localEngine, { gid: 1000, hostGroup: true }, log, { WARDEN_CHANNEL_DIR: base }),
    ).toBeUndefined();
    expect({ logged, made: await readdir(base) }).toEqual({ logged: [], made: [] });
  });

  it("is off, quietly, for a controller that is not root unless WARDEN_CHANNEL_DIR is set", async () => {
    const getuid = vi.spyOn(process, "getuid").mockReturnValue(1000);
    try {
      const logged: string[] = [];
      expect(await socketDirFor(localEngine, { gid: 43210 }, (m) => logged.push(m), {})).toBeUndefined();
      expect(logged).toEqual([]);
    } finally {
      getuid.mockRestore();
    }
  });

  it("makes the sandbox's directory under a chosen base", async () => {
    const base = await tempDir();
    const dir = await socketDirFor(localEngine, { gid: 43210 }, () => {}, { WARDEN_CHANNEL_DIR: base });
    expect(await readdir(base)).toEqual([dir?.slice(base.length + 1)]);
  });

  it("is off for the process, said once, when the base is unsafe", async () => {
    const base = await tempDir();
    await chmod(base, 0o777);
    const logged: string[] = [];
    for (let i = 0; i < 3; i++)
      expect(
        await socketDirFor(localEngine, { gid: 43210 }, (m) => logged.push(m), { WARDEN_CHANNEL_DIR: base }),
      ).toBeUndefined();
    expect(logged).toEqual([
      `channel stays on the attach stream from now on: no socket directory under ${base} (${base} is writable by others (mode 777))`,
    ]);
    expect(await readdir(base)).toEqual([]);
  });
});

describe("isMissingBindSource", () => {
  it("knows the engine's answer to the socket directory it cannot see, and nothing else", () => {
    const dir = "/run/warden-channels/0123456789abcdef";
    const missing = (source: string) =>
      new Error(
        `(HTTP code 400) unexpected - invalid mount config for type "bind": bind source path does not exist: ${source} `,
      );
    expect(isMissingBindSource(missing(dir), dir)).toBe(true);
    // A workspace that vanished is the caller's error, not a reason to turn the socket off.
    expect(isMissingBindSource(missing("/srv/workspaces/acme"), dir)).toBe(false);
    expect(isMissingBindSource(new Error("(HTTP code 404) no such image - No such image: x"), dir)).toBe(
      false,
    );
    expect(isMissingBindSource(`bind source path does not exist: ${dir}`, dir)).toBe(false);
  });
});

describe("socketDirOf", () => {
  const base = "/run/warden-channels";
  const at = (Source: string, Destination = "/run/warden-channel") => ({ Mounts: [{ Source, Destination }] });

  it("names a directory createSocketDir made under the base", () => {
    expect(socketDirOf(at(`${base}/0123456789abcdef`), base)).toBe(`${base}/0123456789abcdef`);
  });

  it("ignores any other source or destination (only such directories are ever removed)", () => {
    expect(socketDirOf(at("/etc"), base)).toBeUndefined();
    expect(socketDirOf(at(`${base}/../etc/0123456789abcdef`), base)).toBeUndefined();
    expect(socketDirOf(at(`${base}/0123456789abcdef/x`), base)).toBeUndefined();
    expect(socketDirOf(at(`${base}/0123456789abcdef`, "/workspace"), base)).toBeUndefined();
    expect(socketDirOf({}, base)).toBeUndefined();
  });
});

describe("sweepSocketDirs", () => {
  it("removes only directories no container uses that are older than ten minutes", async () => {
    const base = await tempDir();
    const names = ["0000000000000001", "0000000000000002", "0000000000000003", "not-a-socket-dir"];
    for (const name of names) await mkdir(join(base, name));
    const old = new Date(Date.now() - SOCKET_DIR_SWEEP_AGE_MS - 60_000);
    for (const name of ["0000000000000001", "0000000000000002", "not-a-socket-dir"])
      await utimes(join(base, name), old, old);
    const inUse = new Set([join(base, "0000000000000002")]);
    const now = new Date();
    expect(await sweepSocketDirs(inUse, { now, base, dryRun: true })).toEqual([
      join(base, "0000000000000001"),
    ]);
    expect((await readdir(base)).sort()).toEqual(names);
    expect(await sweepSocketDirs(inUse, { now, base })).toEqual([join(base, "0000000000000001")]);
    expect((await readdir(base)).sort()).toEqual(names.slice(1));
  });

  it("finds nothing when the base is missing or another uid's", async () => {
    expect(
      await sweepSocketDirs(new Set(), { now: new Date(), base: "/nonexistent/warden-channels" }),
    ).toEqual([]);
    const base = await tempDir();
    await mkdir(join(base, "0000000000000001"));
    const old = new Date(Date.now() - SOCKET_DIR_SWEEP_AGE_MS - 60_000);
    await utimes(join(base, "0000000000000001"), old, old);
    await chown(base, 1000, 1000);
    expect(await sweepSocketDirs(new Set(), { now: new Date(), base })).toEqual([]);
  });

  it("neither removes nor reports a directory others may write (it could lead anywhere)", async () => {
    const base = await tempDir();
    await mkdir(join(base, "0000000000000001"));
    await chmod(join(base, "0000000000000001"), 0o770);
    const old = new Date(Date.now() - SOCKET_DIR_SWEEP_AGE_MS - 60_000);
    await utimes(join(base, "0000000000000001"), old, old);
    expect(await sweepSocketDirs(new Set(), { now: new Date(), base })).toEqual([]);
    expect(await readdir(base)).toEqual(["0000000000000001"]);
  });

  it("leaves a directory of another uid alone", async () => {
    const base = await tempDir();
    await mkdir(join(base, "0000000000000001"));
    await chown(join(base, "0000000000000001"), 1000, 1000);
    const old = new Date(Date.now() - SOCKET_DIR_SWEEP_AGE_MS - 60_000);
    await utimes(join(base, "0000000000000001"), old, old);
    expect(await sweepSocketDirs(new Set(), { now: new Date(), base })).toEqual([]);
    expect(await readdir(base)).toEqual(["0000000000000001"]);
  });
});
