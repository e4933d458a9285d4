/**
 * The k8s bench section's pure parts: the p99 row's name says when it is only the largest sample,
 * a Pod's memory counts only once the kubelet has sampled it, the node's room for more Pods by
 * each of the scheduler's bounds, and the RSS slope.
 */
import type { V1Node, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { p99Name, percentile } from "../../../bench/harness.js";
import { type KubeletSummary, podWorkingSets } from "../../../bench/sections/k8s-cluster.js";
import { nodeRoom, podRequests, slope } from "../../../bench/sections/k8s-room.js";

describe("p99Name", () => {
  it("calls a p99 of fewer than 100 samples the largest, as the nearest rank makes it", () => {
    const ninetyNine = Array.from({ length: 99 }, (_, i) => i);
    expect(percentile(ninetyNine, 99)).toBe(98);
    expect(p99Name("claim", 99)).toBe("claim p99 (= max of 99)");
    const hundred = Array.from({ length: 100 }, (_, i) => i);
    expect(percentile(hundred, 99)).toBe(98);
    expect(p99Name("claim", 100)).toBe("claim p99 (n=100)");
  });
});

describe("podWorkingSets", () => {
  const pod = (name: string, namespace: string, bytes?: number) => ({
    podRef: { name, namespace },
    ...(bytes === undefined ? {} : { memory: { workingSetBytes: bytes } }),
  });

  it("takes the named Pods of the namespace with a sampled (non-zero) working set", () => {
    const summary: KubeletSummary = {
      pods: [
        pod("a", "bench", 4_153_344),
        pod("b", "bench", 0),
        pod("c", "bench"),
        pod("a", "other", 1),
        pod("d", "bench", 7),
      ],
    };
    expect(podWorkingSets(summary, "bench", new Set(["a", "b", "c"]))).toEqual([4_153_344]);
  });

  it("is empty for a summary without Pods", () => {
    expect(podWorkingSets({}, "bench", new Set(["a"]))).toEqual([]);
  });
});

describe("nodeRoom", () => {
  const node: V1Node = {
    metadata: { name: "n1" },
    status: { allocatable: { pods: "250", cpu: "2", memory: "24581184Ki" } },
  };
  const pod = (nodeName: string, cpu: string, memory: string, phase = "Running"): V1Pod => ({
    spec: { nodeName, containers: [{ name: "c", resources: { requests: { cpu, memory } } }] },
    status: { phase },
  });
  const each = podRequests(pod("n1", "10m", String(32 * 1024 * 1024)));

  it("reads a Pod's requests in millicores and bytes, an init container's when larger, plus overhead", () => {
    expect(each).toEqual({ cpuMilli: 10, memoryBytes: 33_554_432 });
    const withInit: V1Pod = {
      spec: {
        containers: [{ name: "c", resources: { requests: { cpu: "10m", memory: "32Mi" } } }],
        initContainers: [{ name: "i", resources: { requests: { cpu: "250m" } } }],
        overhead: { cpu: "5m", memory: "1Mi" },
      },
    };
    expect(podRequests(withInit)).toEqual({ cpuMilli: 255, memoryBytes: 34_603_008 });
  });

  it("on this test node's settings, 10m CPU requests bound an empty node at 200 Pods, before maxPods 250", () => {
    expect(nodeRoom(node, [], each)).toEqual({
      placed: 0,
      maxPods: 250,
      cpu: 200,
      memory: 750,
      room: 200,
      bound: "CPU requests",
    });
  });

  it("counts only the node's Pods that have not ended, of any request", () => {
    const pods = [
      pod("n1", "100m", "1Gi"),
      pod("n1", "500m", "1Gi", "Succeeded"),
      pod("n1", "500m", "1Gi", "Failed"),
      pod("n2", "1", "1Gi"),
      ...Array.from({ length: 60 }, () => pod("n1", "0", "0")),
    ];
    expect(nodeRoom(node, pods, each)).toEqual({
      placed: 61,
      maxPods: 189,
      cpu: 190,
      memory: 718,
      room: 189,
      bound: "maxPods",
    });
  });

  it("puts no bound on a resource the Pod does not request", () => {
    expect(nodeRoom(node, [], { cpuMilli: 0, memoryBytes: 0 })).toMatchObject({
      room: 250,
      bound: "maxPods",
    });
  });
});

describe("slope", () => {
  it("is the least-squares slope, NaN without two distinct x", () => {
    expect(
      slope([
        { x: 0, y: 100 },
        { x: 10, y: 120 },
        { x: 20, y: 140 },
      ]),
    ).toBe(2);
    expect(
      slope([
        { x: 0, y: 0 },
        { x: 1, y: 3 },
        { x: 2, y: 2 },
        { x: 3, y: 5 },
      ]),
    ).toBeCloseTo(1.4, 10);
    expect(slope([{ x: 5, y: 1 }])).toBeNaN();
  });
});
