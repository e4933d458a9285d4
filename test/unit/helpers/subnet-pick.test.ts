/**
 * test/helpers/subnet-pick.ts: a test network's subnet never overlaps a route, an interface
 * address or an address the host resolves (issue 36 item 3: the egress testbed took a /27 of
 * 203.0.113.0/24 while the package registries resolved to 203.0.113.80, cutting the host off).
 */
import { describe, expect, it } from "vitest";
import {
  aptSourceHosts,
  hostsFileEntries,
  noFreeSubnetMessage,
  overlaps,
  pickSubnet,
  resolvConfNameservers,
  routesFromIpJson,
  testNetCandidates,
  urlHost,
} from "../../helpers/subnet-pick.js";

const slash27s = (net: string) => Array.from({ length: 8 }, (_, i) => `${net}.${i * 32}/27`);

/** This machine's `ip -4 -j route show table all`, shortened. */
const IP_ROUTES = JSON.stringify([
  { dst: "default", gateway: "192.0.2.1", dev: "eth0", flags: [] },
  { dst: "172.17.0.0/16", dev: "docker0", protocol: "kernel", scope: "link", flags: [] },
  { dst: "192.0.2.0/24", dev: "eth0", protocol: "kernel", scope: "link", flags: [] },
  { type: "local", dst: "127.0.0.0/8", dev: "lo", table: "local", flags: [] },
  { type: "local", dst: "192.0.2.2", dev: "eth0", table: "local", flags: [] },
]);

describe("overlaps", () => {
  it("compares IPv4 ranges, a bare address being a /32, and never IPv6", () => {
    expect(overlaps("203.0.113.64/27", "203.0.113.80")).toBe(true);
    expect(overlaps("203.0.113.96/27", "203.0.113.80")).toBe(false);
    expect(overlaps("203.0.113.0/27", "203.0.0.0/16")).toBe(true);
    expect(overlaps("10.213.16.0/24", "10.213.0.0/24")).toBe(false);
    expect(overlaps("10.213.16.5/24", "10.213.16.200")).toBe(true);
    expect(overlaps("10.0.0.0/8", "fd00::/64")).toBe(false);
  });
});

describe("pickSubnet", () => {
  const held = [
    ...routesFromIpJson(IP_ROUTES),
    { cidr: "203.0.113.80", holder: "registry.npmjs.org (npm registry) resolves to 203.0.113.80" },
  ];

  it("skips the candidate holding an address a registry resolves to, and the ones a route holds", () => {
    const candidates = ["192.0.2", "203.0.113"].flatMap(slash27s);
    const order = [candidates[0], candidates[10], candidates[11]] as string[];
    // 192.0.2.0/27 is under eth0's route, 203.0.113.64/27 holds the registries' address.
    expect(pickSubnet(order, held)).toEqual({ subnet: "203.0.113.96/27" });
  });

  it("the default route holds nothing", () => {
    expect(pickSubnet(["198.51.100.0/27"], held)).toEqual({ subnet: "198.51.100.0/27" });
  });

  it("when none is free, names every candidate and each thing that holds it", () => {
    const pick = pickSubnet(["192.0.2.0/27", "203.0.113.64/27"], held);
    expect(pick).toEqual({
      subnet: undefined,
      blocked: [
        {
          subnet: "192.0.2.0/27",
          holders: [
            "route 192.0.2.0/24 dev eth0 (table main)",
            "route local 192.0.2.2 dev eth0 (table local)",
          ],
        },
        {
          subnet: "203.0.113.64/27",
          holders: ["registry.npmjs.org (npm registry) resolves to 203.0.113.80"],
        },
      ],
    });
    if (pick.subnet !== undefined) throw new Error("unreachable");
    expect(noFreeSubnetMessage("warden-test-pub-0a1b2c3d", pick.blocked)).toBe(
      "no free subnet for test network warden-test-pub-0a1b2c3d: each candidate overlaps a range this host uses, and a network there would take its traffic:\n" +
        "  192.0.2.0/27: route 192.0.2.0/24 dev eth0 (table main); route local 192.0.2.2 dev eth0 (table local)\n" +
        "  203.0.113.64/27: registry.npmjs.org (npm registry) resolves to 203.0.113.80\n" +
        "Free one of these ranges (remove the route, network or name that holds it) or run the tests on a host where one is unused.",
    );
  });
});

describe("reading what the host uses", () => {
  it("routes of every table, the default route left out", () => {
    expect(routesFromIpJson(IP_ROUTES)).toEqual([
      { cidr: "172.17.0.0/16", holder: "route 172.17.0.0/16 dev docker0 (table main)" },
      { cidr: "192.0.2.0/24", holder: "route 192.0.2.0/24 dev eth0 (table main)" },
      { cidr: "127.0.0.0/8", holder: "route local 127.0.0.0/8 dev lo (table local)" },
      { cidr: "192.0.2.2", holder: "route local 192.0.2.2 dev eth0 (table local)" },
    ]);
  });

  it("/etc/hosts entries and resolv.conf nameservers (IPv4; comments ignored)", () => {
    expect(
      hostsFileEntries(
        "127.0.0.1 localhost\n# 10.1.1.1 old\n::1 ip6-localhost\n10.9.9.9 mirror.internal m # x\n",
      ),
    ).toEqual([
      { cidr: "127.0.0.1", holder: "/etc/hosts: 127.0.0.1 localhost" },
      { cidr: "10.9.9.9", holder: "/etc/hosts: 10.9.9.9 mirror.internal m" },
    ]);
    expect(resolvConfNameservers("search x\nnameserver 10.255.255.53\nnameserver fd00::53\n")).toEqual([
      { cidr: "10.255.255.53", holder: "nameserver 10.255.255.53 (/etc/resolv.conf)" },
    ]);
  });

  it("apt source hosts from one-line and deb822 files (Debian 12 and 13)", () => {
    expect(
      aptSourceHosts(
        "deb [arch=amd64 signed-by=/k.gpg] https://download.docker.com/linux/debian bookworm stable\n# deb http://old.example/ x\ndeb file:/srv/repo ./\n" +
          "Types: deb\nURIs: http://deb.debian.org/debian http://mirror.example/debian\nSuites: trixie\n",
      ),
    ).toEqual(["download.docker.com", "deb.debian.org", "mirror.example"]);
  });

  it("a URL's host; Go's `direct` and `off` name none", () => {
    expect(urlHost("https://registry.npmjs.org/")).toBe("registry.npmjs.org");
    expect(urlHost("http://[fd00::5]:3128/simple")).toBe("fd00::5");
    expect(urlHost("direct")).toBeUndefined();
    expect(urlHost("off")).toBeUndefined();
  });
});

describe("testNetCandidates", () => {
  it("cuts the TEST-NETs in /27s while 29 containers fit: the testbed's default", () => {
    const c = testNetCandidates(2);
    expect(c).toHaveLength(24);
    expect(c).toEqual(["192.0.2", "198.51.100", "203.0.113"].flatMap(slash27s));
    expect(testNetCandidates(29)).toEqual(c);
  });

  it("takes larger blocks for more containers: 100 gateways and a host need a /25", () => {
    expect(testNetCandidates(30)[0]).toBe("192.0.2.0/26");
    expect(testNetCandidates(101)).toEqual([
      "192.0.2.0/25",
      "192.0.2.128/25",
      "198.51.100.0/25",
      "198.51.100.128/25",
      "203.0.113.0/25",
      "203.0.113.128/25",
    ]);
    expect(testNetCandidates(253)).toEqual(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]);
  });

  it("refuses more than a /24 holds, saying how many fit", () => {
    expect(() => testNetCandidates(254)).toThrow(/at most 253 containers.*254 asked/);
  });
});
