/**
 * createHelperContainer (start-helper.ts) when the engine cannot see the socket directory, as for
 * a controller in a container whose WARDEN_CHANNEL_DIR is not bind-mounted on the engine's host:
 * the container is made without it, the directory goes, and the socket is off for the process.
 * The engine's real answer is checked in test/engine/sandbox/channel/socket.test.ts.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  resetChannelSocketState,
  socketDirFor,
} from "../../../../../src/sandbox/docker/channel/socket-dir.js";
import { createHelperContainer } from "../../../../../src/sandbox/docker/channel/start-helper.js";

let base: string;
beforeEach(async () => {
  resetChannelSocketState();
  base = await mkdtemp(join(tmpdir(), "warden-create-helper-test-"));
});
afterEach(async () => {
  resetChannelSocketState();
  await rm(base, { recursive: true, force: true });
});

/** An engine that refuses any bind mount, as one on another host refuses a path it does not have. */
function engineWithoutTheDirectory() {
  const bodies: Docker.ContainerCreateOptions[] = [];
  const docker = {
    modem: { socketPath: "/var/run/docker.sock" },
    createContainer: async (body: Docker.ContainerCreateOptions) => {
      bodies.push(body);
      const bind = body.HostConfig?.Mounts?.find((m) => m.Type === "bind");
      if (bind)
        throw new Error(
          `(HTTP code 400) unexpected - invalid mount config for type "bind": bind source path does not exist: ${bind.Source} `,
        );
      return { id: `c${bodies.length}` } as Docker.Container;
    },
  } as unknown as Docker;
  return { docker, bodies };
}

describe("createHelperContainer", () => {
  it("makes the container without the directory the engine cannot see, removes it, and turns the socket off", async () => {
    const { docker, bodies } = engineWithoutTheDirectory();
    const logged: string[] = [];
    const env = { WARDEN_CHANNEL_DIR: base };
    const dir = await socketDirFor(docker, { gid: 43210 }, () => {}, env);
    const made = await createHelperContainer(docker, { Image: "i" }, dir, (m) => logged.push(m));
    expect({
      id: made.container.id,
      socketDir: made.socketDir,
      mounts: bodies.map((b) => b.HostConfig?.Mounts?.length ?? 0),
    }).toEqual({
      id: "c2",
      socketDir: undefined,
      mounts: [1, 0],
    });
    expect(await readdir(base)).toEqual([]);
    expect(logged).toEqual([
      `channel stays on the attach stream from now on: the engine does not see ${dir}; bind-mount WARDEN_CHANNEL_DIR at the same path on the engine's host, or set it to none`,
    ]);
    // Later sandboxes of this process do not try again.
    expect(await socketDirFor(docker, { gid: 43210 }, () => {}, env)).toBeUndefined();
    expect(await readdir(base)).toEqual([]);
  });

  it("passes any other engine error on, and keeps the socket on", async () => {
    const docker = {
      modem: { socketPath: "/var/run/docker.sock" },
      createContainer: async () => {
        throw new Error("(HTTP code 404) no such image - No such image: i");
      },
    } as unknown as Docker;
    const env = { WARDEN_CHANNEL_DIR: base };
    const dir = await socketDirFor(docker, { gid: 43210 }, () => {}, env);
    await expect(createHelperContainer(docker, { Image: "i" }, dir, () => {})).rejects.toThrow(
      "No such image: i",
    );
    expect(await socketDirFor(docker, { gid: 43210 }, () => {}, env)).toMatch(
      new RegExp(`^${base}/[0-9a-f]{16}$`),
    );
  });
});
