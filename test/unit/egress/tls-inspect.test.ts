/**
 * The gateway opens each allowed TLS tunnel to check the requests inside (images/gateway/tunnel.go):
 * the session CA line the gateway
 * sends, the sandbox's CA variables and mount, and the checks of network.caBundlePath.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CA_BUNDLE_PATH, sandboxEnv, sandboxNetworkConfig } from "../../../src/egress/gateway.js";
import { networkPolicyKey, resolveNetworkOptions } from "../../../src/egress/index.js";
import { parseSessionCaLine, SESSION_CA_PREFIX, sessionCaPath } from "../../../src/egress/session-ca.js";
import type { NetworkRule } from "../../../src/egress/types.js";

const rules: NetworkRule[] = [
  { host: "pypi.org", ports: [443], decision: "allow" },
  { host: "files.example", ports: [443], decision: "allow" },
];
const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0E=\n-----END CERTIFICATE-----\n";

describe("the session CA", () => {
  const line = (text: string) => `${SESSION_CA_PREFIX} ${Buffer.from(text).toString("base64")}`;

  it("takes exactly one PEM certificate from the gateway's line, never a key", () => {
    expect(parseSessionCaLine(line(PEM))).toBe(PEM);
    expect(
      parseSessionCaLine(line(`${PEM}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`)),
    ).toBeNull();
    expect(
      parseSessionCaLine(line("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")),
    ).toBeNull();
    expect(parseSessionCaLine("2026/12/01 16:49:36| Accepting connections")).toBeNull();
  });

  it("has one host path per session id, whatever characters the id has", () => {
    expect(sessionCaPath("s:1@x")).toBe(sessionCaPath("s:1@x"));
    expect(sessionCaPath("s:1@x")).not.toBe(sessionCaPath("s:2@x"));
    expect(sessionCaPath("s:1@x")).toMatch(/warden-egress-ca\/[0-9a-f]{32}\.pem$/);
  });

  it("is what the sandbox's TLS clients trust, mounted read-only; the gateway is its DNS server", () => {
    const env = sandboxEnv("http://172.30.0.2:3128");
    const named = Object.keys(env).filter((k) => env[k] === CA_BUNDLE_PATH);
    expect(named.join(" ")).toBe(
      "SSL_CERT_FILE PIP_CERT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS",
    );
    const config = sandboxNetworkConfig(
      { Image: "x" },
      { networkName: "n", caBundlePath: "/tmp/ca.pem", address: "172.30.0.2" },
    );
    expect(config.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/tmp/ca.pem", Target: CA_BUNDLE_PATH, ReadOnly: true },
    ]);
    expect([config.HostConfig?.NetworkMode, config.HostConfig?.Dns]).toEqual(["n", ["172.30.0.2"]]);
  });
});

describe("network.caBundlePath (the origins' extra CAs)", () => {
  const dir = mkdtempSync(join(tmpdir(), "warden-ca-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const check = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return resolveNetworkOptions({ mode: "allowlist", rules, caBundlePath: path });
  };

  it("takes PEM certificates up to 64 KiB and refuses a key or a larger file", async () => {
    await expect(check("ok.pem", PEM)).resolves.toMatchObject({ caBundlePath: join(dir, "ok.pem") });
    await expect(check("key.pem", `${PEM}-----BEGIN PRIVATE KEY-----\n`)).rejects.toThrow(/no private key/);
    await expect(check("big.pem", PEM.repeat(2000))).rejects.toThrow(/more than 65536/);
    await expect(check("text.pem", "hello")).rejects.toThrow(/must hold PEM CA certificates/);
  });

  it("keys warm-pool spares by the bundle's content and the approval timeout, not the path alone", async () => {
    const path = join(dir, "rotated.pem");
    const keyNow = async (approvalTimeoutMs?: number) => {
      const network = { mode: "allowlist" as const, rules, caBundlePath: path };
      const resolved = await resolveNetworkOptions(
        approvalTimeoutMs ? { ...network, approvalTimeoutMs } : network,
      );
      return networkPolicyKey(resolved as Parameters<typeof networkPolicyKey>[0]);
    };
    writeFileSync(path, PEM);
    const before = await keyNow();
    writeFileSync(path, `${PEM}${PEM}`);
    const after = await keyNow();
    expect([before === after, after === (await keyNow()), after === (await keyNow(60_000))]).toEqual([
      false,
      true,
      false,
    ]);
    // A digest the caller passes is not taken: resolution replaces it with the file's.
    const given = await resolveNetworkOptions({
      mode: "allowlist",
      rules,
      caBundlePath: path,
      caBundleSha256: "x",
    });
    expect(given).toMatchObject({
      caBundleSha256: createHash("sha256").update(`${PEM}${PEM}`).digest("hex"),
    });
  });

  it("refuses a directory, a missing file and a FIFO (opened without waiting for a writer)", async () => {
    const fifo = join(dir, "fifo.pem");
    execFileSync("mkfifo", [fifo]);
    for (const path of [dir, join(dir, "missing.pem"), fifo])
      await expect(resolveNetworkOptions({ mode: "allowlist", rules, caBundlePath: path })).rejects.toThrow(
        `network.caBundlePath ${path} is not a file; pass a PEM file of CA certificates.`,
      );
  });
});
