/**
 * test/helpers/test-network.ts against this host and engine: the ranges it reads include the
 * addresses the npm registry resolves to (issue 36 item 3: they lay in 203.0.113.0/24, where the
 * egress testbed's public network went), and a test network never takes a subnet holding one.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { afterAll, expect, it } from "vitest";
import { getDocker } from "../../../src/sandbox/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { createTestNetwork, hostHeldRanges } from "../../helpers/test-network.js";

const registryHost = new URL(execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim())
  .hostname;
/** The /27 holding an IPv4 address. */
const slash27 = (address: string) => {
  const [a, b, c, d] = address.split(".").map(Number) as [number, number, number, number];
  return `${a}.${b}.${c}.${d - (d % 32)}/27`;
};
const created: string[] = [];
afterAll(async () => {
  for (const name of created)
    await getDocker()
      .getNetwork(name)
      .remove()
      .catch(() => {});
});

describeEngine("test networks shadow nothing the host uses", () => {
  it("the npm registry's addresses are held with their /24 (round-robin DNS), named by the registry", async () => {
    const addresses = (await lookup(registryHost, { all: true, family: 4 })).map((a) => a.address);
    expect(addresses.length).toBeGreaterThan(0);
    const held = await hostHeldRanges();
    for (const address of addresses)
      expect(held).toContainEqual({
        cidr: `${address.split(".").slice(0, 3).join(".")}.0/24`,
        holder: `${registryHost} (npm registry) resolves to ${address}`,
      });
  });

  it("a network never takes the /27 of the registry's address; with no other candidate the error names it", async () => {
    const { address } = await lookup(registryHost, { family: 4 });
    const docker = getDocker();
    const name = `warden-test-net-${randomBytes(4).toString("hex")}`;
    await expect(
      createTestNetwork(docker, {
        name,
        candidates: [slash27(address)],
        labels: { "io.warden.test": "net" },
      }),
    ).rejects.toThrow(
      `no free subnet for test network ${name}: each candidate overlaps a range this host uses, and a network there would take its traffic:\n  ${slash27(address)}: `,
    );
    await expect(
      createTestNetwork(docker, { name, candidates: [slash27(address)], labels: {} }),
    ).rejects.toThrow(`${registryHost} (npm registry) resolves to ${address}`);
    created.push(name);
    const free = "198.51.100.224/27";
    expect(
      await createTestNetwork(docker, {
        name,
        candidates: [slash27(address), free],
        labels: { "io.warden.test": "net" },
      }),
    ).toBe(free);
  });
});
