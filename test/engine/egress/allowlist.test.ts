/**
 * Network egress against a real engine (docs/network.md): a sandbox in `allowlist` mode reaches
 * an allowed name over HTTP and HTTPS through its gateway, and nothing else: not a denied or
 * unlisted name, an IP literal, a listed name that resolves to a private address, DNS of any
 * name, a socket that ignores the proxy variables, UDP, a Host or SNI that disagrees with the
 * name asked for (the gateway opens each TLS tunnel with the session CA to check the requests
 * inside), nor an `ask` name without an approver; each connection has its audit record. The
 * session CA's key never enters the sandbox. Killing the gateway leaves the session with no network.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ConnectionAudit } from "../../../src/egress/index.js";
import { createSandbox, getDocker, LABEL } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { auditRecordsOf, NET_CLIENT } from "./client.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("egress");

describeEngine("network egress: allowlist through the gateway", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  let proxy = "";
  const audit: ConnectionAudit[] = [];
  const net = async (...args: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/net.py", ...args] })).stdout.trim();
  /** The audit records of `domain`, once the gateway has logged `count` of them. */
  const auditOf = (domain: string, count = 1) => auditRecordsOf(audit, domain, count);

  beforeAll(async () => {
    bed = await startEgressTestbed();
    sandbox = await createSandbox({
      tenant,
      ttlMs: 120_000,
      network: {
        mode: "allowlist",
        rules: [
          { host: "allowed.test", ports: [80, 443], decision: "allow" },
          { host: "private.test", ports: [80, 443], decision: "allow" },
          { host: "pypi.test", ports: [443], decision: "allow" },
          { host: "ask.test", ports: [80, 443], decision: "ask" },
          { host: "denied.test", ports: [80, 443], decision: "deny" },
        ],
        egressNetworks: [bed.publicNetwork, bed.privateNetwork],
        caBundlePath: bed.caBundlePath,
        onConnection: (r) => audit.push(r),
      },
    });
    if (sandbox.info.network?.mode === "allowlist") proxy = sandbox.info.network.proxyUrl;
    await sandbox.writeFile("/tmp/net.py", Buffer.from(NET_CLIENT));
  }, 120_000);

  afterAll(async () => {
    const sessionId = sandbox?.info.sessionId;
    await sandbox?.destroy();
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
    const networks = await getDocker().listNetworks({
      filters: { label: [`${LABEL.session}=${sessionId}`] },
    });
    expect(networks.map((n) => n.Name)).toEqual([]);
  });

  it("reaches an allowed name over HTTP and HTTPS, with an allow record for each", async () => {
    expect(await net("get", "http://allowed.test/hello")).toBe("OK 200 hello from public as allowed.test");
    expect(await net("get", "https://allowed.test/hello")).toBe("OK 200 hello from public as allowed.test");
    const records = await auditOf("allowed.test", 3);
    const http = records.find((r) => r.method === "GET" && r.port === 80);
    const tls = records.find((r) => r.method === "CONNECT");
    const inside = records.find((r) => r.method === "GET" && r.port === 443);
    expect(http).toMatchObject({
      sessionId: sandbox.info.sessionId,
      port: 80,
      decision: "allow",
      rule: "allow allowed.test:80+443",
    });
    expect(tls).toMatchObject({
      port: 443,
      decision: "allow",
      rule: "allow allowed.test:80+443",
      sni: "allowed.test",
    });
    // The request inside the tunnel, with the tunnel's SNI and its own bytes.
    expect(inside).toMatchObject({
      decision: "allow",
      rule: "allow allowed.test:80+443",
      sni: "allowed.test",
    });
    expect(http?.bytesIn).toBeGreaterThan(30);
    expect(inside?.bytesIn).toBeGreaterThan(30);
    expect(inside?.remoteAddress).toBe(bed.publicAddress);
    expect(http?.remoteAddress).toBe(bed.publicAddress);
  });

  it("refuses a denied name and an unlisted one", async () => {
    expect(await net("get", "https://denied.test/hello")).toMatch(/^ERR /);
    expect(await net("get", "http://other.test/hello")).toMatch(/^ERR .*403/);
    expect((await auditOf("denied.test"))[0]).toMatchObject({
      decision: "deny",
      rule: "deny denied.test:80+443",
    });
    expect((await auditOf("other.test"))[0]).toMatchObject({ decision: "deny", rule: "not-listed" });
  });

  it("refuses an `ask` name when no approver answers (non-interactive = deny)", async () => {
    expect(await net("get", "https://ask.test/hello")).toMatch(/^ERR /);
    expect(await net("get", "http://ask.test/hello")).toBe("ERR HTTPError HTTP Error 403: Forbidden");
    expect((await auditOf("ask.test", 2)).map((r) => [r.method, r.decision, r.ask, r.rule])).toEqual([
      ["CONNECT", "ask→deny", "non-interactive", "ask ask.test:80+443 (nobody to ask: non-interactive)"],
      ["GET", "ask→deny", "non-interactive", "ask ask.test:80+443 (nobody to ask: non-interactive)"],
    ]);
  });

  it("refuses IP literals, even of the allowed host", async () => {
    expect(await net("get", `http://${bed.publicAddress}/hello`)).toMatch(/^ERR .*403/);
    expect(await net("get", `https://${bed.publicAddress}/hello`)).toMatch(/^ERR /);
    expect((await auditOf(bed.publicAddress, 2)).map((r) => [r.decision, r.rule])).toEqual([
      ["deny", "ip-literal"],
      ["deny", "ip-literal"],
    ]);
  });

  it("refuses a listed name that resolves to a private address", async () => {
    expect(await net("get", "http://private.test/hello")).toMatch(/^ERR .*403/);
    expect(await net("get", "https://private.test/hello")).toMatch(/^ERR /);
    expect(await bed.hostLog("private", "requests")).toBe("");
    const records = await auditOf("private.test", 2);
    expect(records.map((r) => [r.decision, r.rule])).toEqual([
      ["deny", "refused-address (allow private.test:80+443)"],
      ["deny", "refused-address (allow private.test:80+443)"],
    ]);
  });

  it("answers DNS for allowed names with the gateway's address only, and no other name", async () => {
    const gateway = new URL(proxy).hostname;
    expect(await net("dns", "allowed.test")).toBe(`OK ['${gateway}']`);
    for (const name of ["denied.test", "other.test", "deb.debian.org", "example.com"])
      expect(await net("dns", name)).toMatch(/^ERR gaierror/);
  });

  it("gives a socket that ignores the proxy variables, and UDP, no route", async () => {
    expect(await net("direct", bed.publicAddress, "80")).toMatch(/^ERR /);
    expect(await net("direct", bed.publicAddress, "443")).toMatch(/^ERR /);
    expect(await net("direct", "172.17.0.1", "80")).toMatch(/^ERR /);
    // The datagram may leave the socket (Docker's internal network still sets a default route,
    // to a bridge address warden's network does not assign); it never arrives.
    await net("udp", bed.publicAddress, "5353");
    await new Promise((r) => setTimeout(r, 1000));
    expect(await bed.hostLog("public", "udp")).toBe("");
  });

  it("refuses a TLS tunnel whose SNI names another host, and a request inside whose Host is not the SNI's; plain HTTP reaches only the name checked", async () => {
    // CONNECT to the allowed name, ClientHello for another: the gateway terminates before any byte reaches the host.
    expect(await net("sni", proxy, "allowed.test", "other.test")).toMatch(/^ERR /);
    expect(await net("sni", proxy, "allowed.test", "allowed.test")).toBe("OK HTTP/1.1 200 OK");
    // An SNI holding a space: Squid hands it to the check unescaped, where it once made one more
    // field (passing the check) and the audit line one field too many (no record at all).
    expect(await net("sni", proxy, "allowed.test", "allowed.test allowed.test")).toMatch(/^ERR /);
    // Inside the tunnel, a Host that is not the SNI's (domain fronting): unlisted, listed, or in
    // an absolute URL; each refused by the gateway, none reaches the host.
    expect(await net("sni", proxy, "allowed.test", "allowed.test", "other.test")).toBe(
      "ERR HTTP/1.1 403 Forbidden",
    );
    expect(await net("sni", proxy, "allowed.test", "allowed.test", "pypi.test")).toBe(
      "ERR HTTP/1.1 403 Forbidden",
    );
    expect(
      await net("sni", proxy, "allowed.test", "allowed.test", "allowed.test", "https://pypi.test/front"),
    ).toBe("ERR HTTP/1.1 403 Forbidden");
    // Plain HTTP: the name checked is the URL's; the origin gets that name as Host, never the client's.
    expect(await net("host", proxy, "http://allowed.test/hello", "other.test")).toBe("OK HTTP/1.1 200 OK");
    expect(await net("host", proxy, "http://other.test/hello", "allowed.test")).toMatch(
      /^ERR HTTP\/1\.1 403/,
    );
    const requests = await bed.hostLog("public", "requests");
    expect(requests).not.toMatch(/^other\.test /m);
    expect(requests).not.toMatch(/^pypi\.test /m);
    expect(requests).not.toMatch(/\/front$/m);
    const tunnels = await auditOf("allowed.test", 6);
    expect(tunnels.filter((r) => r.sni === "other.test").map((r) => [r.decision, r.rule])).toEqual([
      ["deny", "sni-mismatch (allow allowed.test:80+443)"],
    ]);
    expect(
      tunnels
        .filter((r) => r.sni?.includes(" ") || r.sni?.includes("%20"))
        .map((r) => [r.sni, r.decision, r.rule]),
    ).toEqual([["allowed.test allowed.test", "deny", "sni-mismatch (allow allowed.test:80+443)"]]);
    const fronted = audit.filter((r) => r.sni === "allowed.test" && r.domain !== "allowed.test");
    expect(fronted.map((r) => [r.method, r.domain, r.port, r.decision, r.rule])).toEqual([
      ["GET", "other.test", 443, "deny", "host-sni-mismatch (not-listed)"],
      ["GET", "pypi.test", 443, "deny", "host-sni-mismatch (allow pypi.test:443)"],
      ["GET", "pypi.test", 443, "deny", "host-sni-mismatch (allow pypi.test:443)"],
    ]);
  });

  it("audits a CONNECT tunnel carrying plain HTTP as an SNI refusal on a listed port, and as not-listed on another port", async () => {
    // allowed.test allows 80 and 443: the CONNECT to :80 passes its rule, and the gateway refuses
    // the tunnel because no TLS (no SNI naming the CONNECT host) comes; it once said `refused-address`.
    expect(await net("plain-tunnel", proxy, "allowed.test:80")).toMatch(/^ERR/);
    // pypi.test allows 443 only: port 80 is on no rule.
    expect(await net("plain-tunnel", proxy, "pypi.test:80")).toMatch(/^ERR/);
    const tunnelsTo80 = async (domain: string) => {
      const of = () => audit.filter((r) => r.domain === domain && r.method === "CONNECT" && r.port === 80);
      while (of().length === 0) await new Promise((r) => setTimeout(r, 100));
      return of().map(({ decision, rule, sni, remoteAddress }) => ({ decision, rule, sni, remoteAddress }));
    };
    expect(await tunnelsTo80("allowed.test")).toEqual([
      {
        decision: "deny",
        rule: "sni-mismatch (allow allowed.test:80+443)",
        sni: undefined,
        remoteAddress: undefined,
      },
    ]);
    expect(await tunnelsTo80("pypi.test")).toEqual([
      { decision: "deny", rule: "not-listed", sni: undefined, remoteAddress: undefined },
    ]);
  });

  it("keeps the session CA's key in the gateway's memory: no file holds it, the sandbox has its certificate only", async () => {
    if (sandbox.info.network?.mode !== "allowlist") throw new Error("not an allowlist sandbox");
    const gateway = sandbox.info.network.gatewayContainerId;
    // The gateway has no writable filesystem at all (read-only root, no tmpfs, no mount): the key
    // it makes at start can only be in its memory.
    const info = await getDocker().getContainer(gateway).inspect();
    expect([info.HostConfig.ReadonlyRootfs, info.HostConfig.Tmpfs ?? {}, info.Mounts]).toEqual([
      true,
      {},
      [],
    ]);
    const keysInGateway = execFileSync(
      "docker",
      [
        "exec",
        gateway,
        "sh",
        "-c",
        "grep -rlIE 'PRIVATE KEY' /etc /usr /run /tmp /var /root /home 2>/dev/null; true",
      ],
      { encoding: "utf8" },
    );
    expect(keysInGateway).toBe("");
    const bundle = (await run(sandbox, { argv: ["cat", "/etc/warden/ca-bundle.pem"] })).stdout;
    expect(bundle).toMatch(/^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n$/);
    // The certificate the sandbox trusts is the issuer of what the gateway shows for an allowed name.
    const issuer = await run(sandbox, {
      shell:
        "openssl x509 -noout -subject -in /etc/warden/ca-bundle.pem | sed 's/^subject=//'; echo | openssl s_client -proxy \"$(echo $HTTPS_PROXY | cut -d/ -f3)\" -connect allowed.test:443 -servername allowed.test -CAfile /etc/warden/ca-bundle.pem 2>/dev/null | grep -E '^(issuer=|Verify return code)'",
    });
    const [subject, issued, verified] = issuer.stdout.trim().split("\n");
    expect(subject).toMatch(/^ ?CN ?= ?warden session CA /);
    expect(issued?.replace(/^issuer=/, "")).toBe(subject);
    expect(verified).toBe("Verify return code: 0 (ok)");
    const found = await run(sandbox, {
      shell:
        "env | grep -c 'PRIVATE KEY'; grep -rlF 'PRIVATE KEY' /etc /tmp /home /root /run /var /opt /workspace 2>/dev/null; true",
    });
    expect(found.stdout).toBe("0\n");
    const env = await run(sandbox, { shell: "echo $SSL_CERT_FILE $PIP_CERT $REQUESTS_CA_BUNDLE" });
    expect(env.stdout).toBe(
      "/etc/warden/ca-bundle.pem /etc/warden/ca-bundle.pem /etc/warden/ca-bundle.pem\n",
    );
    // The host-side file the sandbox mounts holds the certificate and nothing else.
    const mount = (await getDocker().getContainer(sandbox.info.containerId).inspect()).Mounts.find(
      (m) => m.Destination === "/etc/warden/ca-bundle.pem",
    );
    expect(readFileSync(mount?.Source ?? "", "utf8")).toBe(bundle);
  });

  it("refuses an origin whose certificate no CA the gateway trusts signed (no caBundlePath: the test CA is unknown)", async () => {
    const records: ConnectionAudit[] = [];
    const strict = await createSandbox({
      tenant,
      ttlMs: 60_000,
      network: {
        mode: "allowlist",
        rules: [{ host: "allowed.test", ports: [443], decision: "allow" }],
        egressNetworks: [bed.publicNetwork],
        onConnection: (r) => records.push(r),
      },
    });
    try {
      await strict.writeFile("/tmp/net.py", Buffer.from(NET_CLIENT));
      const got = await run(strict, {
        argv: ["python3", "/tmp/net.py", "get", "https://allowed.test/hello"],
      });
      expect(got.stdout.trim()).toBe("ERR HTTPError HTTP Error 502: Bad Gateway");
      const inside = (await auditRecordsOf(records, "allowed.test", 2)).filter((r) => r.method === "GET");
      expect(inside.map((r) => [r.decision, r.rule])).toEqual([
        ["deny", "upstream-tls (allow allowed.test:443)"],
      ]);
    } finally {
      await strict.destroy();
    }
  });

  it("installs a package with pip from an allowed index, and not from an unlisted one", async () => {
    const pip = (index: string, target: string) =>
      run(sandbox, {
        shell: `pip install --no-cache-dir --break-system-packages --disable-pip-version-check --retries 0 --timeout 5 --target ${target} --index-url ${index} tinypkg`,
      });
    const ok = await pip("https://pypi.test/simple/", "/tmp/ok");
    expect(ok.exitCode, ok.stderr).toBe(0);
    const imported = await run(sandbox, {
      shell: "PYTHONPATH=/tmp/ok python3 -c 'import tinypkg; print(tinypkg.VALUE)'",
    });
    expect(imported.stdout).toBe("42\n");
    const refused = await pip("https://other.test/simple/", "/tmp/no");
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/No matching distribution found for tinypkg/);
    // The tunnel and the requests inside it (the fronted requests of the test above excepted).
    const index = (await auditOf("pypi.test", 5)).filter((r) => r.sni === "pypi.test");
    expect(index.map((r) => r.method)).toEqual(["CONNECT", "GET", "GET"]);
    expect(index.every((r) => r.decision === "allow")).toBe(true);
    expect((await auditOf("other.test")).filter((r) => r.method === "CONNECT")[0]).toMatchObject({
      decision: "deny",
      rule: "not-listed",
    });
  });

  it("has no network at all once the gateway is killed", async () => {
    if (sandbox.info.network?.mode !== "allowlist") throw new Error("not an allowlist sandbox");
    await getDocker().getContainer(sandbox.info.network.gatewayContainerId).kill();
    expect(await net("get", "http://allowed.test/hello")).toMatch(/^ERR /);
    expect(await net("get", "https://allowed.test/hello")).toMatch(/^ERR /);
    expect(await net("direct", bed.publicAddress, "80")).toMatch(/^ERR /);
  });
});
