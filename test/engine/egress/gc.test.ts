/**
 * `warden gc` and egress: a gateway and session network whose sandbox is gone (a controller crash
 * between them) are removed by label; a live session's are not. A missing gateway image is an
 * error (the sandbox is never created without its gateway: prepare.ts starts the gateway first), so
 * are a gateway that never starts and an egress network the engine does not have: each leaves no
 * gateway container and no session network behind. An egress network with no address left for
 * the gateway (the default bridge is a /24 under /24 address pools) is NO_ROOM, and leaves nothing.
 */
import { afterAll, expect, it } from "vitest";
import { startEgressGateway } from "../../../src/egress/index.js";
import { createSandbox, DEFAULT_IMAGE, gc, getDocker } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, testTenant } from "../../helpers/sandbox-fixture.js";
import { withFreeSubnet } from "../../helpers/test-network.js";
import { egressOf } from "./testbed.js";

const tenant = testTenant("egress-gc");
const network = {
  mode: "allowlist" as const,
  rules: [{ host: "example.org", ports: [443], decision: "allow" as const }],
};

describeEngine("network egress: gc", () => {
  afterAll(async () => {
    expect(await leftovers(tenant)).toEqual([]);
  });

  /** Starts the gateway of `sessionId` (the tenant's) from `image`. */
  const gatewayFrom = (sessionId: string, image: string) =>
    startEgressGateway(getDocker(), {
      sessionId,
      labels: { "io.warden.tenant": tenant },
      keepLabels: ["io.warden.tenant"],
      network,
      image,
    });

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
    await expect(gatewayFrom(sessionId, "warden-gateway:does-not-exist")).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringContaining("warden images build"),
    });
    expect(await egressOf(sessionId)).toEqual([]);
  }, 60_000);

  it("a gateway that never accepts connections is an error after its start timeout, and leaves nothing", async () => {
    const sessionId = "test-gateway-never-ready";
    // The sandbox image runs no Squid: the gateway never says it accepts connections.
    await expect(gatewayFrom(sessionId, DEFAULT_IMAGE)).rejects.toMatchObject({
      code: "SANDBOX_ERROR",
      message: expect.stringContaining("the egress gateway did not start within 20000 ms"),
    });
    expect(await egressOf(sessionId)).toEqual([]);
  }, 90_000);

  it("an egress network that does not exist fails the session's creation naming it and the fix, and leaves nothing", async () => {
    const sessionId = `test-no-egress-network-${process.pid}`;
    await expect(
      createSandbox({
        tenant,
        sessionId,
        network: { ...network, egressNetworks: ["warden-test-no-such-network"] },
      }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        "The egress network 'warden-test-no-such-network' does not exist, so the session gets no network. " +
        "Create it (docker network create warden-test-no-such-network) or name an existing one in network.egressNetworks (--egress-network).",
    });
    expect(await egressOf(sessionId)).toEqual([]);
  }, 60_000);

  it("an egress network with no address left fails the session's creation as NO_ROOM naming it and the fixes, and leaves nothing", async () => {
    const docker = getDocker();
    const name = `warden-test-full-${process.pid}`;
    // A /30: the network's address, the bridge's, one for a container and the broadcast; that one
    // is reserved (an auxiliary address), so the engine has none for the gateway.
    await withFreeSubnet(
      docker,
      name,
      Array.from({ length: 64 }, (_, i) => `10.214.${i}.0/30`),
      async (subnet) => {
        await docker.createNetwork({
          Name: name,
          Driver: "bridge",
          CheckDuplicate: true,
          Labels: { "io.warden.test": "egress" },
          IPAM: {
            Config: [{ Subnet: subnet, AuxiliaryAddresses: { taken: subnet.replace(/0\/30$/, "2") } }],
          },
        });
      },
    );
    const sessionId = `test-full-egress-network-${process.pid}`;
    try {
      const refused = createSandbox({ tenant, sessionId, network: { ...network, egressNetworks: [name] } });
      await expect(refused).rejects.toMatchObject({
        code: "NO_ROOM",
        message: expect.stringMatching(
          new RegExp(
            `^creating the sandbox: the engine network '${name}' has no address left for another container \\(no available IPv4 addresses on this network's address pools: ${name} \\(\\w+\\)\\)\\. .*name an egress network with a larger subnet`,
          ),
        ),
      });
      expect(await egressOf(sessionId)).toEqual([]);
    } finally {
      await docker.getNetwork(name).remove();
    }
  }, 60_000);
});
