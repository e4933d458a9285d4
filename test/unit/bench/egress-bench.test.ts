/** The egress bench's pure parts: the engine's free address-pool slots, an egress network's free addresses, rows without a value. */
import { describe, expect, it } from "vitest";
import { formatRows } from "../../../bench/harness.js";
import { memAvailableBytes, pssBytes } from "../../../bench/sections/egress-host-memory.js";
import {
  DEFAULT_ADDRESS_POOLS,
  freeNetworkAddresses,
  freePoolSlots,
} from "../../../bench/sections/egress-pools.js";

describe("freePoolSlots", () => {
  it("counts the default pools as 31 networks: fifteen /16s of 172.16/12 and sixteen /20s of 192.168/16", () => {
    expect(freePoolSlots(DEFAULT_ADDRESS_POOLS, [])).toEqual({ total: 31, free: 31 });
  });

  it("takes a slot for every subnet or host address that overlaps it, one or many slots each", () => {
    const used = [
      "172.17.0.0/16", // docker0
      "172.18.5.0/24", // smaller than its slot
      "192.168.16.0/20",
      "192.168.33.7/32", // a host address inside 192.168.32.0/20
      "10.0.0.0/8", // outside every pool
      "fd00::/64", // IPv6: ignored
    ];
    expect(freePoolSlots(DEFAULT_ADDRESS_POOLS, used)).toEqual({ total: 31, free: 27 });
    expect(freePoolSlots(DEFAULT_ADDRESS_POOLS, ["192.168.0.0/16"])).toEqual({ total: 31, free: 15 });
  });

  it("cuts a configured pool by its size", () => {
    expect(freePoolSlots([{ Base: "10.10.0.0/16", Size: 24 }], ["10.10.3.0/24"])).toEqual({
      total: 256,
      free: 255,
    });
  });
});

describe("freeNetworkAddresses", () => {
  it("leaves the network's address, the broadcast and the bridge's own out, then those attached", () => {
    expect(freeNetworkAddresses("192.0.2.0/27", 0)).toBe(29);
    expect(freeNetworkAddresses("192.0.2.0/27", 1)).toBe(28);
    expect(freeNetworkAddresses("198.51.100.128/25", 1)).toBe(124);
    expect(freeNetworkAddresses("192.0.2.0/27", 40)).toBe(0);
    expect(freeNetworkAddresses("fd00::/64", 0)).toBe(0);
  });
});

describe("host memory figures", () => {
  it("reads Pss from smaps_rollup and MemAvailable from meminfo, in bytes", () => {
    const rollup =
      "55d0a000-7ffd0000 ---p 00000000 00:00 0  [rollup]\nRss:   13904 kB\nPss:    4211 kB\nPss_Anon:  3000 kB\n";
    expect(pssBytes(rollup)).toBe(4211 * 1024);
    expect(pssBytes("")).toBeUndefined();
    const meminfo = "MemTotal:       24683520 kB\nMemFree:        21567488 kB\nMemAvailable:   24187904 kB\n";
    expect(memAvailableBytes(meminfo)).toBe(24187904 * 1024);
    expect(memAvailableBytes("MemTotal: 1 kB\n")).toBeUndefined();
  });
});

describe("formatRows", () => {
  it("prints a row without a measurement as '-' with its note and no ratio", () => {
    const text = formatRows("egress", [
      { name: "a", value: 12.5, unit: "ms", baseline: 10, baselineName: "direct" },
      {
        name: "b",
        value: Number.NaN,
        unit: "ms",
        baseline: 10,
        baselineName: "direct",
        note: "not available: no pool",
      },
    ]);
    expect(text.split("\n")).toEqual([
      "egress  a  12.5 ms  10.0 ms (direct)  1.25x",
      "egress  b  -        10.0 ms (direct)         not available: no pool",
    ]);
  });
});
