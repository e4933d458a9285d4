/**
 * The gateway opens each allowed TLS tunnel to check the requests inside (src/egress/squid-config.ts):
 * its squid.conf, the audit records of a tunnel and its requests, the session CA line the gateway
 * sends, the sandbox's CA variables and mount, and the checks of network.caBundlePath.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CA_BUNDLE_PATH, sandboxEnv, sandboxNetworkConfig } from "../../../src/egress/gateway.js";
import { parseAccessLine, resolveNetworkOptions, squidConfig } from "../../../src/egress/index.js";
import { parseSessionCaLine, SESSION_CA_PREFIX, sessionCaPath } from "../../../src/egress/session-ca.js";
import type { NetworkRule } from "../../../src/egress/types.js";

const rules: NetworkRule[] = [
  { host: "pypi.org", ports: [443], decision: "allow" },
  { host: "files.example", ports: [443], decision: "allow" },
];
const PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0E=\n-----END CERTIFICATE-----\n";

describe("squid.conf of an opened tunnel", () => {
  const conf = (upstreamCa: boolean) =>
    squidConfig({
      rules,
      refusedCidrs: ["10.0.0.0/8"],
      clientCidrs: ["172.30.0.0/16"],
      port: 3128,
      askHelper: false,
      upstreamCa,
    });

  it("signs with the session CA, verifies origins against the system's CAs plus the operator's, and never ignores a certificate error", () => {
    const c = conf(true);
    expect(c).toContain(
      "http_port 3128 ssl-bump tls-cert=/run/gw/cert.pem tls-key=/run/gw/key.pem generate-host-certificates=on dynamic_cert_mem_cache_size=4MB",
    );
    expect(c).toContain("tls_outgoing_options default-ca=on cafile=/run/gw/upstream-ca.pem\n");
    expect(conf(false)).toContain("tls_outgoing_options default-ca=on\n");
    expect(c).toContain("sslproxy_cert_error deny all");
    expect(c).not.toMatch(/DONT_VERIFY|sslproxy_cert_error allow|flags=/);
  });

  it("refuses a request inside a tunnel whose host or Host header is not the SNI's, before any allow", () => {
    const c = conf(false);
    expect(c).toContain(
      "external_acl_type host_sni_match ttl=0 negative_ttl=0 children-max=4 %DST %ssl::>sni %>{Host} /usr/local/bin/warden-sni-match request",
    );
    const access = c.split("\n").filter((l) => l.startsWith("http_access"));
    expect(access.slice(0, 2)).toEqual([
      "http_access deny !session_net",
      "http_access deny https_scheme !host_matches_sni",
    ]);
    // Both names are checked against the rules too: the request's host and its Host header.
    expect(access).toContain("http_access allow https_scheme r0_host r0_port r0_hosthdr !refused_dst");
  });
});

describe("audit records of an opened tunnel", () => {
  const parse = (rest: string) => parseAccessLine(`WARDEN-AUDIT 1796123438.763 ${rest}`, "s1", rules);

  it("records the tunnel when opened and each request inside it with its SNI and bytes", () => {
    expect(parse("CONNECT pypi.org 443 NONE_NONE/200 61 0 194 pypi.org 203.0.113.66 bump -")).toMatchObject({
      method: "CONNECT",
      decision: "allow",
      rule: "allow pypi.org:443",
      sni: "pypi.org",
    });
    expect(parse("GET pypi.org 443 TCP_MISS/200 62 2090 21 pypi.org 203.0.113.66 - -")).toMatchObject({
      method: "GET",
      decision: "allow",
      sni: "pypi.org",
      insideTunnel: true,
      bytesOut: 62,
      bytesIn: 2090,
      remoteAddress: "203.0.113.66",
    });
  });

  it("skips the error page Squid serves inside a refused tunnel: the tunnel's record says why", () => {
    expect(parse("CONNECT denied.test 443 TCP_DENIED/200 36 0 27 denied.test - bump -")).toMatchObject({
      method: "CONNECT",
      decision: "deny",
      rule: "not-listed",
    });
    expect(parse("GET denied.test 443 NONE_NONE/403 120 3402 0 denied.test - - -")).toBeNull();
  });

  it("names a Host that disagrees with the SNI, listed or not, and a failed origin TLS connection", () => {
    expect(parse("GET evil.example 443 TCP_DENIED/403 60 3416 28 pypi.org - bump -")).toMatchObject({
      decision: "deny",
      rule: "host-sni-mismatch (not-listed)",
      sni: "pypi.org",
    });
    expect(parse("GET files.example 443 TCP_DENIED/403 60 3416 28 pypi.org - bump -")).toMatchObject({
      decision: "deny",
      rule: "host-sni-mismatch (allow files.example:443)",
    });
    expect(parse("GET pypi.org 443 NONE_NONE/503 62 3803 0 pypi.org - - -")).toMatchObject({
      decision: "deny",
      rule: "upstream-tls (allow pypi.org:443)",
      refusal: "upstream-tls",
    });
  });
});

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

  it("is what the sandbox's TLS clients trust, mounted read-only", () => {
    const env = sandboxEnv("http://172.30.0.2:3128");
    const named = Object.keys(env).filter((k) => env[k] === CA_BUNDLE_PATH);
    expect(named.join(" ")).toBe(
      "SSL_CERT_FILE PIP_CERT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS",
    );
    const config = sandboxNetworkConfig({ Image: "x" }, { networkName: "n", caBundlePath: "/tmp/ca.pem" });
    expect(config.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/tmp/ca.pem", Target: CA_BUNDLE_PATH, ReadOnly: true },
    ]);
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
});
