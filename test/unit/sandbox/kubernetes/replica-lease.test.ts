import { describe, expect, it } from "vitest";
import { replicaLeaseName } from "../../../../src/sandbox/kubernetes/index.js";

describe("replicaLeaseName", () => {
  it("is a DNS subdomain name per replica id, ids differing only in case kept apart", () => {
    const name = replicaLeaseName("Warden_0");
    expect(name).toMatch(/^warden-replica-warden-0-[0-9a-f]{8}$/);
    expect(replicaLeaseName("warden-0")).not.toBe(replicaLeaseName("Warden-0"));
    expect(replicaLeaseName("warden-0")).toBe(replicaLeaseName("warden-0"));
    const long = replicaLeaseName(`${"a".repeat(60)}.b`);
    expect(long).toMatch(/^warden-replica-a{40}-[0-9a-f]{8}$/);
    expect(replicaLeaseName("_._")).toMatch(/^warden-replica-[0-9a-f]{8}$/);
  });
});
