import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { killGroupCommand, wrapCommand } from "../../../src/sandbox/docker/exec/wrapper.js";
import { hardenedContainerConfig, workspaceVolumeConfig } from "../../../src/sandbox/docker/hardening.js";
import { LABEL, sandboxLabels, staleReason } from "../../../src/sandbox/labels.js";
import { cgroupMemoryBytes, DEFAULT_LIMITS, resolveLimits } from "../../../src/sandbox/limits.js";
import { diffHashes } from "../../../src/sandbox/workspace-hashes.js";

describe("resolveLimits", () => {
  it("fills defaults and rejects non-positive values naming the field", () => {
    expect(resolveLimits({ cpus: 2 })).toEqual({ ...DEFAULT_LIMITS, cpus: 2 });
    expect(() => resolveLimits({ pids: 0 })).toThrow("limits.pids must be a positive number, got 0");
    expect(() => resolveLimits({ tmpBytes: Number.POSITIVE_INFINITY })).toThrow("limits.tmpBytes");
    // Red team: cpus 1e-10 became NanoCpus 0, which Docker reads as no CPU limit at all.
    expect(() => resolveLimits({ cpus: 1e-10 })).toThrow(
      "limits.cpus must be at least 0.01 (Docker's minimum), got 1e-10.",
    );
    expect(resolveLimits({ cpus: 0.01 }).cpus).toBe(0.01);
    expect(() => resolveLimits({ pids: 1.5 })).toThrow("limits.pids must be a whole number");
  });
});

describe("cgroupMemoryBytes", () => {
  it("is --memory plus the tmpfs areas charged to the same cgroup (docs/cli.md states the figures)", () => {
    expect(cgroupMemoryBytes(DEFAULT_LIMITS, "copy")).toBe(2_282_749_952);
    expect(cgroupMemoryBytes(DEFAULT_LIMITS, "ro")).toBe(1_209_008_128);
  });
});

describe("hardenedContainerConfig", () => {
  it("builds the hardened create body", () => {
    const limits = resolveLimits({});
    const c = hardenedContainerConfig({
      image: "img",
      limits,
      runtime: "runsc",
      labels: { a: "b" },
      workspaceMode: "ro",
      workspaceHostPath: "/src",
      mounts: [{ hostPath: "/r", containerPath: "/ref" }],
      uid: 1234567,
    });
    expect(c.HostConfig).toMatchObject({
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: 256,
      NanoCpus: 1e9,
      Init: true,
      Runtime: "runsc",
      Memory: cgroupMemoryBytes(limits, "ro"),
      MemorySwap: cgroupMemoryBytes(limits, "ro"),
    });
    // memoryBytes + /tmp + HOME (each tmpBytes) + /run/warden: tmpfs pages count against the cgroup.
    expect(cgroupMemoryBytes(limits, "ro")).toBe((1024 + 64 + 64 + 1) * 1024 * 1024);
    expect(c.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/src", Target: "/workspace", ReadOnly: true },
      { Type: "bind", Source: "/r", Target: "/ref", ReadOnly: true },
    ]);
    expect(c.User).toBe("1234567:1234567");
    expect(c.HostConfig?.Tmpfs).toEqual({
      "/tmp": `size=${limits.tmpBytes},mode=1777`,
      "/home/sandbox": `size=${limits.tmpBytes},uid=1234567,gid=1234567,mode=0700`,
      "/run/warden": "size=1m,uid=1234567,gid=1234567,mode=0700",
    });
    expect(c.Env).toHaveLength(3);
  });

  it("sizes the copy-mode volume as a tmpfs owned by the sandbox's uid", () => {
    expect(workspaceVolumeConfig("v", 1000, {}, 2097152).DriverOpts).toEqual({
      type: "tmpfs",
      device: "tmpfs",
      o: "size=1000,uid=2097152,gid=2097152,mode=0755",
    });
  });

  it("refuses root or no uid: a sandbox never runs as uid 0", () => {
    const base = {
      image: "img",
      limits: resolveLimits({}),
      runtime: "runc" as const,
      labels: {},
      mounts: [],
    };
    expect(() =>
      hardenedContainerConfig({ ...base, workspaceMode: "copy", workspaceVolume: "v", uid: 0 }),
    ).toThrow("a sandbox's uid must be a positive integer (never root), got 0.");
    expect(() => workspaceVolumeConfig("v", 1000, {}, Number.NaN)).toThrow("never root");
  });
});

describe("exec wrapper", () => {
  it("passes argv after the pgid file, and the kill grace in tenths of a second", () => {
    const cmd = wrapCommand("abc", ["echo", "a b"]);
    expect(cmd.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(cmd.slice(3)).toEqual(["warden", "/run/warden/abc.pgid", "echo", "a b"]);
    expect(killGroupCommand("abc", 0.5).slice(3)).toEqual(["warden-kill", "/run/warden/abc.pgid", "5"]);
  });
});

describe("labels and staleness", () => {
  const now = new Date("2026-01-02T00:00:00Z");
  it("judges expired, orphaned on this host, and live", () => {
    const labels = sandboxLabels({
      sessionId: "s",
      tenant: "t",
      createdAt: new Date("2026-01-01T00:00:00Z"),
      expiresAt: new Date("2026-01-03T00:00:00Z"),
    });
    expect(labels[LABEL.controller]).toBe(`${hostname()}:${process.pid}`);
    expect(staleReason(labels, now)).toBeNull();
    expect(staleReason({ ...labels, [LABEL.expires]: "2026-01-01T12:00:00Z" }, now)).toBe("expired");
    expect(staleReason({ ...labels, [LABEL.controller]: `${hostname()}:2147483646` }, now)).toBe("orphaned");
    expect(staleReason({ ...labels, [LABEL.controller]: "other-host:2147483646" }, now)).toBeNull();
  });
});

describe("diffHashes", () => {
  it("reports added, modified and deleted paths sorted", () => {
    const before = new Map([
      ["b", "1"],
      ["a", "1"],
      ["l", "link:x"],
    ]);
    const after = new Map([
      ["a", "2"],
      ["c", "1"],
      ["l", "link:x"],
    ]);
    expect(diffHashes(before, after)).toEqual([
      { path: "a", kind: "modified" },
      { path: "b", kind: "deleted" },
      { path: "c", kind: "added" },
    ]);
  });
});
