/**
 * `warden gc` and egress: a gateway and session network whose sandbox is gone (a controller crash
 * between them) are removed by label; a live session's are not. A missing gateway image is an
 * error (the sandbox is never created without its gateway: prepare.ts starts the gateway first).
 */
import { afterAll, expect, it } from "vitest";
import { SESSION_LABEL, startEgressGateway } from "../../../src/egress/index.js";
import { createSandbox, gc, getDocker } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("egress-gc");
const network = {
  mode: "allowlist" as const,
  rules: [{ host: "example.org", ports: [443], decision: "allow" as const }],
};

describeEngine("network egress: gc", () => {
  afterAll(async () => {
    expect(await leftovers(tenant)).toEqual([]);
  });

  const egressOf = async (sessionId: string) => {
    const filters = { label: [`${SESSION_LABEL}=${sessionId}`] };
    const docker = getDocker();
    const containers = await docker.listContainers({ all: true, filters });
    const networks = await docker.listNetworks({ filters });
    return [...containers.map(() => "gateway"), ...networks.map(() => "network")].sort();
  };

  it("removes the gateway and network of a session whose sandbox is gone, and keeps a live one's", async () => {
    const live = await createSandbox({ tenant, ttlMs: 3_600_000, network });
    const crashed = await createSandbox({ tenant, ttlMs: 3_600_000, network });
    try {
      await getDocker().getContainer(crashed.info.containerId).remove({ force: true, v: true });
      const later = new Date(Date.now() + 5 * 60_000);
      const dry = await gc({ tenant, now: later, dryRun: true });
      expect(dry.map((r) => [r.kind, r.sessionId, r.reason]).sort()).toEqual([
        ["gateway", crashed.info.sessionId, "orphaned"],
        ["network", crashed.info.sessionId, "orphaned"],
      ]);
      expect(await egressOf(crashed.info.sessionId)).toEqual(["gateway", "network"]);
      await gc({ tenant, now: later });
      expect(await egressOf(crashed.info.sessionId)).toEqual([]);
      expect(await egressOf(live.info.sessionId)).toEqual(["gateway", "network"]);
    } finally {
      await live.destroy();
      await crashed.destroy();
    }
    expect(await egressOf(live.info.sessionId)).toEqual([]);
  }, 60_000);

  it("refuses to start a gateway from a missing image, naming the fix, and leaves nothing", async () => {
    const sessionId = "test-missing-gateway-image";
    await expect(
      startEgressGateway(getDocker(), {
        sessionId,
        labels: { "io.warden.tenant": tenant },
        keepLabels: ["io.warden.tenant"],
        network,
        image: "warden-gateway:does-not-exist",
      }),
    ).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringContaining("warden images build"),
    });
    expect(await egressOf(sessionId)).toEqual([]);
  }, 60_000);
});
