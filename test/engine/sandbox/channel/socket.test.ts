/**
 * The channel's unix socket on Docker (src/sandbox/docker/channel/socket.ts): a new sandbox's
 * channel moves onto it; its host directory is root's with the sandbox's gid as group (mode 0710:
 * the sandbox may only pass through it, read-only) and goes with the container; gc and serve's
 * start-up sweep remove one a killed controller left; the engine's answer for a directory it
 * cannot see is the one createHelperContainer knows; and with WARDEN_CHANNEL_DIR=none the channel stays on the attach
 * stream and still carries every call.
 */
import { chown, mkdir, mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, expect, it } from "vitest";
import {
  CHANNEL_SOCKET_DIR,
  isMissingBindSource,
  socketDirOf,
  withSocketDir,
} from "../../../../src/sandbox/docker/channel/index.js";
import { createSandbox, gc, getDocker, removeUnusedSocketDirs } from "../../../../src/sandbox/index.js";
import { channelTenant } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers, run } from "../../../helpers/sandbox-fixture.js";

const tenant = channelTenant("socket");

async function hostDirOf(containerId: string): Promise<string | undefined> {
  return socketDirOf(await getDocker().getContainer(containerId).inspect());
}

/**
 * Runs `test` with $WARDEN_CHANNEL_DIR on a base of this file's own, then removes that base: every
 * `warden serve` other test files start sweeps the default base for real, and would take this
 * file's eleven-minute-old orphans first.
 */
async function onPrivateBase(test: (base: string) => Promise<void>): Promise<void> {
  const base = `/run/warden-channels-test-${process.pid}`;
  try {
    await withChannelDir(base, () => test(base));
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

/** Runs `test` with $WARDEN_CHANNEL_DIR set to `value`, then restores it. */
async function withChannelDir(value: string, test: () => Promise<void>): Promise<void> {
  const before = process.env.WARDEN_CHANNEL_DIR;
  process.env.WARDEN_CHANNEL_DIR = value;
  try {
    await test();
  } finally {
    if (before === undefined) delete process.env.WARDEN_CHANNEL_DIR;
    else process.env.WARDEN_CHANNEL_DIR = before;
  }
}

/**
 * Makes an unused socket directory `name` under `base` and dates it and the directory of
 * `containerId` eleven minutes back, past the sweeps' ten-minute guard.
 */
async function elevenMinutesOld(
  base: string,
  containerId: string,
  name: string,
): Promise<{ live: string; orphan: string }> {
  const live = await hostDirOf(containerId);
  expect(live?.startsWith(`${base}/`)).toBe(true);
  const orphan = join(base, name);
  await mkdir(orphan, { recursive: true });
  const old = new Date(Date.now() - 11 * 60_000);
  await utimes(orphan, old, old);
  await utimes(live!, old, old);
  return { live: live!, orphan };
}

describeEngine("the channel's unix socket", () => {
  afterAll(async () => {
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("carries a new sandbox's channel; the sandbox may only pass through its root-owned, read-only directory", async () => {
    const sb = await createSandbox({ tenant });
    expect(sb.info.channelTransport).toBe("socket");
    const dir = await hostDirOf(sb.info.containerId);
    expect(dir).toBeDefined();
    const host = await stat(dir!);
    expect({ uid: host.uid, gid: host.gid, mode: (host.mode & 0o777).toString(8) }).toEqual({
      uid: 0,
      gid: sb.info.uid,
      mode: "710",
    });
    // The listening socket is removed once the helper is connected: nothing is left to connect to.
    expect(await readdir(dir!)).toEqual([]);
    const r = await run(
      sb,
      `stat -c '%u %g %a' ${CHANNEL_SOCKET_DIR}; ls -A ${CHANNEL_SOCKET_DIR}; touch ${CHANNEL_SOCKET_DIR}/x`,
    );
    expect(r.stdout).toBe(`0 ${sb.info.uid} 710\n`);
    expect(r.stderr).toBe(
      `ls: cannot open directory '${CHANNEL_SOCKET_DIR}': Permission denied\ntouch: cannot touch '${CHANNEL_SOCKET_DIR}/x': Read-only file system\n`,
    );
    await sb.destroy();
    await expect(stat(dir!)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("takes its directory on destroy also when the container was removed outside warden", async () => {
    const sb = await createSandbox({ tenant });
    const dir = await hostDirOf(sb.info.containerId);
    await getDocker().getContainer(sb.info.containerId).remove({ force: true, v: true });
    await sb.destroy();
    await expect(stat(dir!)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("stays on the attach stream with WARDEN_CHANNEL_DIR=none, which still carries commands and files", () =>
    withChannelDir("none", async () => {
      await using sb = await createSandbox({ tenant });
      expect(sb.info.channelTransport).toBe("attach");
      expect(await hostDirOf(sb.info.containerId)).toBeUndefined();
      const flood = await run(sb, "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo err >&2");
      expect({ out: flood.stdout.length, err: flood.stderr }).toEqual({ out: 3_000_001, err: "err\n" });
      await sb.writeFile("/workspace/a.txt", Buffer.from("one\n"));
      expect((await run(sb, "cat /workspace/a.txt")).stdout).toBe("one\n");
    }));

  it("stays on the attach stream for a rw workspace (its gid, 1000, is a host group), mounting nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-socket-rw-"));
    await chown(dir, 1000, 1000);
    try {
      await using sb = await createSandbox({ tenant, workspace: { hostPath: dir, mode: "rw" } });
      expect({ uid: sb.info.uid, transport: sb.info.channelTransport }).toEqual({
        uid: 1000,
        transport: "attach",
      });
      expect(await hostDirOf(sb.info.containerId)).toBeUndefined();
      const inspect = await getDocker().getContainer(sb.info.containerId).inspect();
      expect(inspect.Mounts.map((m) => m.Destination)).toEqual(["/workspace"]);
      expect((await run(sb, "echo rw")).stdout).toBe("rw\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("gc finds a socket directory no container uses once it is ten minutes old, and keeps live ones", () =>
    onPrivateBase(async (base) => {
      await using sb = await createSandbox({ tenant });
      const { live, orphan } = await elevenMinutesOld(base, sb.info.containerId, "00000000deadbeef");
      // A dry run: a real gc of every tenant would also take other test files' sandboxes whose
      // controller (a server they killed) is gone. The sweep itself removes what it lists
      // (test/unit/sandbox/docker/channel/socket-dir.test.ts).
      const planned = await gc({ dryRun: true });
      expect(planned.filter((r) => r.kind === "socket-dir")).toEqual([
        { kind: "socket-dir", id: orphan, sessionId: "", tenant: "", reason: "orphaned" },
      ]);
      expect(planned.filter((r) => r.id === live)).toEqual([]);
      await rm(orphan, { recursive: true });
      expect((await run(sb, "echo still")).stdout).toBe("still\n");
    }));

  it("warden serve's start-up sweep removes an old socket directory no container uses, and keeps live ones", () =>
    onPrivateBase(async (base) => {
      await using sb = await createSandbox({ tenant });
      const { live, orphan } = await elevenMinutesOld(base, sb.info.containerId, "00000000feedface");
      // A real removal (unlike gc's dry run above) of what no container mounts.
      expect(await removeUnusedSocketDirs(getDocker())).toEqual([orphan]);
      expect(await readdir(base)).toEqual([basename(live)]);
      expect((await run(sb, "echo still")).stdout).toBe("still\n");
    }));

  it("the engine's answer to a socket directory it cannot see is the one createHelperContainer retries on", async () => {
    const dir = "/nonexistent/warden-channels/0123456789abcdef";
    const config = withSocketDir({ Image: "warden-sandbox:latest", Cmd: ["true"] }, dir);
    const err = await getDocker()
      .createContainer(config)
      .then(
        async (c) => {
          await c.remove({ force: true });
          return undefined;
        },
        (e: unknown) => e,
      );
    expect(isMissingBindSource(err, dir)).toBe(true);
  });
});
