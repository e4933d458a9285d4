/** `gc` removes expired and orphaned sandboxes of its tenant, and nothing else. */
import { expect, it } from "vitest";
import { createSandbox, gc, getDocker, LABEL } from "../../../../src/sandbox/index.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers, testTenant } from "../../../helpers/sandbox-fixture.js";

describeEngine("sandbox gc", () => {
  it("removes an expired container and its volume, keeps a live one", async () => {
    const tenant = testTenant("gc");
    const expired = await createSandbox({ tenant, ttlMs: 1 });
    await using live = await createSandbox({ tenant });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const dry = await gc({ tenant, dryRun: true });
    expect(dry.map((r) => `${r.kind}:${r.reason}`)).toEqual(["container:expired", "volume:expired"]);
    expect((await leftovers(tenant)).length).toBe(4);
    const removed = await gc({ tenant });
    expect(removed).toEqual([
      {
        kind: "container",
        id: expired.info.containerId,
        sessionId: expired.info.sessionId,
        tenant,
        reason: "expired",
      },
      expect.objectContaining({
        kind: "volume",
        sessionId: expired.info.sessionId,
        tenant,
        reason: "expired",
      }),
    ]);
    const left = await leftovers(tenant);
    expect(left).toHaveLength(2);
    expect(left[0]).toBe(`container ${live.info.containerId}`);
    await expired.destroy(); // idempotent after gc removed it
    await live.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("removes a container whose controller process is dead", async () => {
    const tenant = testTenant("gc-orphan");
    const docker = getDocker();
    // What a crashed controller leaves: a labelled container whose controller pid no longer exists.
    const container = await docker.createContainer({
      Image: "warden-sandbox:latest",
      Cmd: ["sleep", "infinity"],
      Labels: {
        [LABEL.session]: "test-orphan",
        [LABEL.tenant]: tenant,
        [LABEL.created]: new Date().toISOString(),
        [LABEL.expires]: new Date(Date.now() + 3_600_000).toISOString(),
        [LABEL.controller]: `${(await import("node:os")).hostname()}:2147483646`,
      },
      HostConfig: { NetworkMode: "none" },
    });
    try {
      const removed = await gc({ tenant });
      expect(removed).toEqual([
        { kind: "container", id: container.id, sessionId: "test-orphan", tenant, reason: "orphaned" },
      ]);
      expect(await leftovers(tenant)).toEqual([]);
    } finally {
      await container.remove({ force: true }).catch(() => {});
    }
  });
});
