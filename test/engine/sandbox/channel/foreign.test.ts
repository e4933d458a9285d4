/** warden-helper in an image warden did not build (debian:bookworm-slim): copied in before start. */
import { afterAll, expect, it } from "vitest";
import {
  connectChannel,
  FOREIGN_HELPER_PATH,
  helperArchive,
  helperPathInImage,
  installHelper,
  planHelper,
  startWithHelper,
  withForeignHelper,
} from "../../../../src/sandbox/docker/channel/index.js";
import { getDocker } from "../../../../src/sandbox/docker/engine.js";
import { channelTenant, runOn, testContainerConfig } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers } from "../../../helpers/sandbox-fixture.js";

const tenant = channelTenant("foreign");

describeEngine("warden-helper in a foreign image", () => {
  afterAll(async () => {
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("finds the helper label on the warden image and none on debian", async () => {
    const docker = getDocker();
    expect(await helperPathInImage(docker, "warden-sandbox:latest")).toBe("/usr/local/bin/warden-helper");
    // Under runc, the execute-only copy (non-dumpable from its execve).
    expect(await helperPathInImage(docker, "warden-sandbox:latest", { sealed: true })).toBe(
      "/usr/local/libexec/warden/warden-helper",
    );
    expect(await helperPathInImage(docker, "debian:bookworm-slim")).toBeNull();
  });

  it("copies the helper into a read-only-root container and serves exec and files", async () => {
    const docker = getDocker();
    const base = testContainerConfig("debian:bookworm-slim", tenant);
    const container = await docker.createContainer(withForeignHelper(base));
    try {
      await installHelper(container, await helperArchive(docker));
      const client = await connectChannel(container, { start: true });
      const r = await runOn(
        client,
        `id -u; ls -l ${FOREIGN_HELPER_PATH} | cut -d' ' -f1,3; touch ${FOREIGN_HELPER_PATH} 2>&1 | wc -l`,
      );
      expect(r).toMatchObject({ exitCode: 0, stdout: "1000\n-rwxr-xr-x root\n1\n" });
      const info = await container.inspect();
      expect(info.HostConfig.ReadonlyRootfs).toBe(true);
      expect(info.Config.Entrypoint).toEqual([FOREIGN_HELPER_PATH]);
      client.close();
    } finally {
      await container.remove({ force: true, v: true });
    }
  });

  it("plans the in-image helper (sealed under runc), a copy for other images, none when docker exec is asked for", async () => {
    const docker = getDocker();
    expect(await planHelper(docker, "warden-sandbox:latest")).toEqual({
      kind: "in-image",
      path: "/usr/local/libexec/warden/warden-helper",
    });
    expect(await planHelper(docker, "warden-sandbox:latest", "channel", "runsc")).toEqual({
      kind: "in-image",
      path: "/usr/local/bin/warden-helper",
    });
    expect((await planHelper(docker, "debian:bookworm-slim")).kind).toBe("copy");
    expect(await planHelper(docker, "warden-sandbox:latest", "docker-exec")).toEqual({
      kind: "none",
      reason: "docker exec was asked for",
    });
    expect((await planHelper(docker, "no-such-image:nope")).kind).toBe("none");
  });

  it("reports why a helper that cannot run did not answer, with the container not running", async () => {
    const docker = getDocker();
    const base = testContainerConfig("warden-sandbox:latest", tenant);
    const plan = { kind: "in-image", path: "/usr/bin/false" } as const;
    const container = await docker.createContainer({
      ...base,
      Entrypoint: [plan.path],
      Cmd: [],
      OpenStdin: true,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
    });
    try {
      const started = await startWithHelper(container, plan, { timeoutMs: 3000 });
      expect(started).toEqual({ reason: "container exited with code 1", running: false });
    } finally {
      await container.remove({ force: true, v: true });
    }
  });
});
