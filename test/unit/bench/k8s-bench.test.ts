/**
 * The k8s bench section's pure parts: the p99 row's name says when it is only the largest sample,
 * and a Pod's memory counts only once the kubelet has sampled it.
 */
import { describe, expect, it } from "vitest";
import { p99Name, percentile } from "../../../bench/harness.js";
import { type KubeletSummary, podWorkingSets } from "../../../bench/sections/k8s-cluster.js";

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
