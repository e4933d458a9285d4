/** `warden serve` and egress: a tenant's network bound, and what a session's request gets within it. */
import { describe, expect, it } from "vitest";
import { decideConnection } from "../../../../src/egress/index.js";
import { createMemoryAuditLog } from "../../../../src/server/audit.js";
import {
  networkAuditHooks,
  resolveServerConfig,
  resolveTenantNetwork,
  sessionNetwork,
} from "../../../../src/server/config/index.js";
import { hashKey } from "../../../../src/server/tenancy/auth.js";

const bound = resolveTenantNetwork(
  {
    allow: ["pypi.org:443", "*.pythonhosted.org:443"],
    ask: ["github.com:443"],
    deny: ["bad.pythonhosted.org"],
    egressNetworks: ["egress"],
  },
  "/etc/warden",
  "config.json: /tenants/0",
);
const base = { tenantId: "acme", bound, policyLayers: [], onConnection: () => {} };

describe("tenant network bound", () => {
  it("gives a session no network unless it asks, and only within its tenant's bound", () => {
    expect(sessionNetwork({ ...base, requested: undefined })).toBeUndefined();
    const net = sessionNetwork({
      ...base,
      requested: ["pypi.org:443", "files.pythonhosted.org:443", "github.com:443"],
    });
    if (net?.mode !== "allowlist") throw new Error("expected an allowlist");
    expect(net.egressNetworks).toEqual(["egress"]);
    expect(decideConnection(net.rules, "pypi.org", 443).decision).toBe("allow");
    expect(decideConnection(net.rules, "files.pythonhosted.org", 443).decision).toBe("allow");
    expect(decideConnection(net.rules, "github.com", 443).decision).toBe("ask");
    expect(decideConnection(net.rules, "x.pythonhosted.org", 443).decision).toBe("deny"); // not requested
  });

  it("refuses a request beyond the bound (400 naming the entry), and any request without a bound", () => {
    expect(() => sessionNetwork({ ...base, requested: ["pypi.org"] })).toThrow(
      "network.allow[0] pypi.org:80 is not within the network allowlist of tenant 'acme'; ask only for hosts and ports it allows, or have the operator add it to the tenant's network.allow in the server config.",
    );
    // The whole wildcard is within the bound; the bound's own deny still applies inside it.
    const wide = sessionNetwork({ ...base, requested: ["*.pythonhosted.org:443"] });
    expect(
      wide?.mode === "allowlist" && decideConnection(wide.rules, "bad.pythonhosted.org", 443).decision,
    ).toBe("deny");
    expect(() => sessionNetwork({ ...base, requested: ["evil.example:443"] })).toThrow(/is not within/);
    expect(() => sessionNetwork({ ...base, bound: undefined, requested: ["pypi.org:443"] })).toThrow(
      "tenant 'acme' has no network allowlist in the server config (tenants[].network), so its sessions get no network.",
    );
  });

  it("is a config error naming the tenant and entry", () => {
    expect(() => resolveTenantNetwork({ allow: ["10.0.0.1"] }, "/", "config.json: /tenants/2")).toThrow(
      /^config\.json: \/tenants\/2\/network\.allow\[0\] "10\.0\.0\.1": the host must be a domain name/,
    );
  });
});

describe("egress audit bound in warden serve", () => {
  const config = (extra: Record<string, unknown>) =>
    resolveServerConfig(
      {
        ...extra,
        tenants: [
          {
            id: "acme",
            keys: [{ id: "k", sha256: hashKey("t") }],
            quotas: { maxSessions: 1, cpus: 1, memoryBytes: 67108864, workspaceBytes: 1000 },
          },
        ],
      },
      "/etc/warden",
      "serve.yaml",
    );

  it("defaults networkAuditLimit to 10 records per second with bursts of 200, and takes another", () => {
    expect(config({}).networkAuditLimit).toEqual({ recordsPerSecond: 10, burst: 200 });
    expect(config({ networkAuditLimit: { recordsPerSecond: 2.5, burst: 40 } }).networkAuditLimit).toEqual({
      recordsPerSecond: 2.5,
      burst: 40,
    });
    expect(() => config({ networkAuditLimit: { recordsPerSecond: 0, burst: 40 } })).toThrow(
      /networkAuditLimit\/recordsPerSecond/,
    );
  });

  it("writes a summary as one network-dropped line, and counts its records under their decisions", () => {
    const log = createMemoryAuditLog();
    const counted: [string, number][] = [];
    const hooks = networkAuditHooks(log, (d, n) => counted.push([d, n]), "acme", "s1", {
      recordsPerSecond: 1,
      burst: 1,
    });
    const summary = {
      sessionId: "s1",
      reason: "rate-limit" as const,
      dropped: 7,
      decisions: { deny: 6, allow: 1 },
      from: "2026-12-01T10:00:00.000Z",
      to: "2026-12-01T10:00:00.900Z",
      limit: { recordsPerSecond: 1, burst: 1 },
    };
    hooks.onAuditDropped(summary);
    const { sessionId: _id, ...rest } = summary;
    expect(log.entries).toEqual([{ kind: "network-dropped", tenant: "acme", session: "s1", ...rest }]);
    expect(counted).toEqual([
      ["deny", 6],
      ["allow", 1],
    ]);
  });
});
