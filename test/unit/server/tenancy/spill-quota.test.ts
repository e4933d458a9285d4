import { describe, expect, it } from "vitest";
import { resolveServerConfig } from "../../../../src/server/config/index.js";
import { hashKey } from "../../../../src/server/tenancy/auth.js";
import { tenantSpillOptions } from "../../../../src/server/tenancy/spill-quota.js";

const quotas = {
  maxSessions: 2,
  maxConcurrentToolCalls: 2,
  cpus: 1,
  memoryBytes: 67108864,
  workspaceBytes: 1000,
};
const tenants = (extra: Record<string, unknown> = {}) => [
  { id: "acme", keys: [{ id: "k", sha256: hashKey("t") }], quotas: { ...quotas, ...extra } },
  { id: "beta", keys: [{ id: "k2", sha256: hashKey("u") }], quotas },
];

describe("warden serve: spill quotas", () => {
  it("default to 256 MiB per session and 1 GiB per tenant; 0 is allowed, a negative size is refused naming the field", () => {
    const cfg = resolveServerConfig({ tenants: tenants({ spillSessionBytes: 0, spillBytes: 5000 }) }, "/");
    expect(cfg.tenants.map((t) => [t.quotas.spillSessionBytes, t.quotas.spillBytes])).toEqual([
      [0, 5000],
      [268_435_456, 1_073_741_824],
    ]);
    expect(() => resolveServerConfig({ tenants: tenants({ spillBytes: -1 }) }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /tenants/0/quotas/spillBytes must be >= 0.",
    );
  });

  it("every session of a tenant draws on one shared budget; other tenants have their own", () => {
    const cfg = resolveServerConfig({ tenants: tenants({ spillSessionBytes: 300, spillBytes: 500 }) }, "/");
    const spillOf = tenantSpillOptions(cfg);
    const one = spillOf("acme");
    const two = spillOf("acme");
    expect(one).toMatchObject({
      spillMaxBytes: 300,
      spillMaxBytesHint: "quotas.spillSessionBytes of tenant 'acme' in the server config",
    });
    expect(two.spillShared).toBe(one.spillShared);
    expect(one.spillShared).toMatchObject({
      scope: "tenant",
      limitBytes: 500,
      raiseHint: "quotas.spillBytes of tenant 'acme' in the server config",
    });
    expect(spillOf("beta").spillShared).not.toBe(one.spillShared);
    expect(spillOf("beta").spillShared?.limitBytes).toBe(1_073_741_824);
    expect(spillOf("nobody")).toEqual({});
  });
});
