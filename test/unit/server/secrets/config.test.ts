/** The `secrets` section of the `warden serve` config: paths resolved against the file, defaults. */
import { describe, expect, it } from "vitest";
import { resolveServerConfig } from "../../../../src/server/config/index.js";
import { hashKey } from "../../../../src/server/tenancy/auth.js";

const tenants = [
  {
    id: "acme",
    keys: [{ id: "k", sha256: hashKey("t") }],
    quotas: { maxSessions: 1, cpus: 1, memoryBytes: 67108864, workspaceBytes: 1000 },
  },
];

describe("warden serve config: secrets", () => {
  it("has no store when the section is absent", () => {
    expect(resolveServerConfig({ tenants }, "/etc/warden").secrets).toBeUndefined();
  });

  it("resolves keyFile against the config's directory; the store defaults to stateDir/secrets.json", () => {
    const cfg = resolveServerConfig(
      { stateDir: "st", secrets: { keyFile: "keys/secrets.key" }, tenants },
      "/etc/warden",
    );
    expect(cfg.secrets).toEqual({
      keyFile: "/etc/warden/keys/secrets.key",
      storeFile: "/etc/warden/st/secrets.json",
      maxPerTenant: 100,
    });
  });

  it("takes storeFile and maxPerTenant", () => {
    const cfg = resolveServerConfig(
      { secrets: { keyFile: "/k", storeFile: "store.json", maxPerTenant: 7 }, tenants },
      "/etc/warden",
    );
    expect(cfg.secrets).toEqual({ keyFile: "/k", storeFile: "/etc/warden/store.json", maxPerTenant: 7 });
  });

  it("refuses the section without keyFile, or with an unknown field, naming it", () => {
    expect(() => resolveServerConfig({ secrets: {}, tenants }, "/", "serve.yaml")).toThrow(
      /^serve\.yaml: invalid server configuration: .*\/secrets.*keyFile/,
    );
    expect(() =>
      resolveServerConfig({ secrets: { keyFile: "/k", key: "x" }, tenants }, "/", "serve.yaml"),
    ).toThrow(/^serve\.yaml: invalid server configuration: .*\/secrets/);
  });
});
