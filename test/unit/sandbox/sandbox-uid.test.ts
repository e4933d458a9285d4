import { describe, expect, it } from "vitest";
import {
  drawSandboxUid,
  parseSandboxUid,
  RW_SANDBOX_UID,
  SANDBOX_UID_END,
  SANDBOX_UID_MIN,
  sandboxUser,
  UidRegistry,
} from "../../../src/sandbox/sandbox-uid.js";
import { tarOwner } from "../../../src/sandbox/workspace-copy.js";

describe("a sandbox's uid", () => {
  it("is drawn from [2^20, 2^31), skipping uids already taken", () => {
    expect([SANDBOX_UID_MIN, SANDBOX_UID_END]).toEqual([1048576, 2147483648]);
    const asked: Array<[number, number]> = [];
    const draws = [5_000_000, 5_000_000, 7_000_000];
    const uid = drawSandboxUid(new Set([5_000_000]), (min, end) => {
      asked.push([min, end]);
      return draws.shift() ?? 0;
    });
    expect(uid).toBe(7_000_000);
    expect(asked).toEqual([
      [1048576, 2147483648],
      [1048576, 2147483648],
      [1048576, 2147483648],
    ]);
  });

  it("is never one a live sandbox of the process holds, and is free again once its owner is removed", () => {
    const registry = new UidRegistry();
    const a = registry.claim("copy");
    registry.bind("container-a", a);
    expect(a).toBeGreaterThanOrEqual(SANDBOX_UID_MIN);
    expect(a).toBeLessThan(SANDBOX_UID_END);
    const many = new Set(Array.from({ length: 200 }, () => registry.claim("ro")));
    expect(many.size).toBe(200);
    expect(many.has(a)).toBe(false);
    expect(registry.has(a)).toBe(true);
    registry.releaseOwner("container-a");
    expect(registry.has(a)).toBe(false);
    const adopted = 12_345_678;
    registry.bind("pod:ns/p", adopted);
    expect(registry.has(adopted)).toBe(true);
  });

  it("is 1000 for every rw sandbox (the bind-mounted directory's prepared owner), never held", () => {
    const registry = new UidRegistry();
    expect(registry.claim("rw")).toBe(RW_SANDBOX_UID);
    registry.bind("c", RW_SANDBOX_UID);
    expect(registry.has(1000)).toBe(false);
  });

  it("reads back from a container's User or a label, and never as root", () => {
    expect(sandboxUser(2_000_001)).toBe("2000001:2000001");
    expect(parseSandboxUid("2000001:2000001", "container c")).toBe(2_000_001);
    expect(parseSandboxUid("1000", "container c")).toBe(1000);
    expect(() => parseSandboxUid("0:0", "container c")).toThrow(
      'container c has no non-root sandbox uid (got "0:0"); remove it with `warden gc`.',
    );
    expect(() => parseSandboxUid("", "container c")).toThrow("no non-root sandbox uid");
    expect(() => parseSandboxUid("sandbox", "container c")).toThrow("no non-root sandbox uid");
    expect(() => parseSandboxUid(undefined, "container c")).toThrow("(got null)");
  });
});

describe("a tar entry's owner", () => {
  it("goes as PAX uid/gid records above USTAR's 262143, which tar-stream would write as 262143", () => {
    expect(tarOwner(1000, 1000)).toEqual({ uid: 1000, gid: 1000 });
    expect(tarOwner(262143, 262143)).toEqual({ uid: 262143, gid: 262143 });
    expect(tarOwner(2_000_001, 2_000_001)).toEqual({
      uid: 2_000_001,
      gid: 2_000_001,
      pax: { uid: "2000001", gid: "2000001" },
    });
  });
});
