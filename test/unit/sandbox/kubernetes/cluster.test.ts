import { describe, expect, it } from "vitest";
import { connectCluster } from "../../../../src/sandbox/kubernetes/index.js";

describe("connectCluster", () => {
  it("refuses a heartbeatMs outside 1 s to 1 h, naming the field and a sound value", () => {
    for (const heartbeatMs of [0, 999, 1500.5, 3_600_001, Number.NaN])
      expect(() => connectCluster({ namespace: "warden", heartbeatMs })).toThrow(
        `backend.heartbeatMs ${JSON.stringify(heartbeatMs)} is not an integer from 1000 to 3600000 (ms between pings of an idle session's helper); keep it well below the node's streaming idle timeout (containerd stream_idle_timeout, default 4 h), e.g. 60000.`,
      );
  });
});
