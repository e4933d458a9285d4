/** Network rule parsing and matching, the gateway's Squid config and its access-log parsing (src/egress/). */
import { describe, expect, it } from "vitest";
import {
  decideConnection,
  hostMatches,
  parseAccessLine,
  parseAllowNet,
  parseHostEntry,
  squidConfig,
} from "../../../src/egress/index.js";
import { resolveNetworkOptions } from "../../../src/egress/network-options.js";
import type { NetworkRule } from "../../../src/egress/types.js";

const rules: NetworkRule[] = [
  { host: "pypi.org", ports: [443], decision: "allow" },
  { host: "*.pythonhosted.org", ports: [443], decision: "allow" },
  { host: "ask.example", ports: [80, 443], decision: "ask" },
  { host: "*.evil.example", ports: [443], decision: "deny" },
  { host: "www.evil.example", ports: [443], decision: "allow" },
];

describe("--allow-net entries", () => {
  it("parses hosts, wildcards and port lists; defaults to 80 and 443", () => {
    expect(parseAllowNet("PyPI.org, *.pythonhosted.org:443,git.test:80+443+8080")).toEqual([
      { host: "pypi.org", ports: [80, 443], decision: "allow", source: "--allow-net entry 1" },
      { host: "*.pythonhosted.org", ports: [443], decision: "allow", source: "--allow-net entry 2" },
      { host: "git.test", ports: [80, 443, 8080], decision: "allow", source: "--allow-net entry 3" },
    ]);
  });

  it("refuses IP literals, bad names and bad ports, naming the entry", () => {
    expect(() => parseAllowNet("10.0.0.1")).toThrow(
      /--allow-net entry 1 "10.0.0.1": the host must be a domain name, not an IP address/,
    );
    expect(() => parseAllowNet("a.org,[::1]:443")).toThrow(/entry 2/);
    expect(() => parseHostEntry("*.", "allow", "x")).toThrow(/1 to 253 characters/);
    expect(() => parseHostEntry("bad_name.org", "allow", "x")).toThrow(/letters, digits and hyphens/);
    expect(() => parseHostEntry("a.org:0", "allow", "x")).toThrow(/ports must be numbers from 1 to 65535/);
    expect(() => parseHostEntry("a.org:https", "allow", "x")).toThrow(/ports must be numbers/);
  });
});

describe("entries that name their fix", () => {
  it("says a URL is not a host pattern and shows the value to write instead", () => {
    expect(() => parseAllowNet("https://pypi.org")).toThrow(
      '--allow-net entry 1 "https://pypi.org": a host pattern is wanted, not a URL: write pypi.org (ports 80 and 443) or pypi.org:443.',
    );
    expect(() => parseAllowNet("a.org,http://mirror.example/simple/")).toThrow(
      '--allow-net entry 2 "http://mirror.example/simple/": a host pattern is wanted, not a URL: write mirror.example (ports 80 and 443) or mirror.example:80; the gateway allows hosts and ports, not paths.',
    );
    expect(() => parseHostEntry("https://user@git.example:8443/x", "allow", "network.allow[0]")).toThrow(
      'network.allow[0] "https://user@git.example:8443/x": a host pattern is wanted, not a URL: write git.example:8443; the gateway allows hosts and ports, not paths.',
    );
    expect(() => parseAllowNet("pypi.org/simple")).toThrow(
      '--allow-net entry 1 "pypi.org/simple": a host pattern is wanted, not a URL: write pypi.org (ports 80 and 443); the gateway allows hosts and ports, not paths.',
    );
  });

  it("refuses an allow or ask wildcard over a public suffix (Public Suffix List, ICANN and private)", () => {
    expect(() => parseAllowNet("*.org")).toThrow(
      '--allow-net entry 1 "*.org": *.org covers every domain under org, a public suffix (Public Suffix List), each with another owner; name the domain you need instead, e.g. example.org or *.example.org.',
    );
    expect(() => parseHostEntry("*.co.uk:443", "ask", "network.ask[0]")).toThrow(
      'network.ask[0] "*.co.uk:443": *.co.uk covers every domain under co.uk, a public suffix',
    );
    expect(() => parseAllowNet("*.github.io")).toThrow(/\*\.github\.io covers every domain under github\.io/);
    // A deny of a suffix, an exact suffix name, a wildcard below a suffix and an unlisted name are fine.
    expect(parseHostEntry("*.zip", "deny", "x").host).toBe("*.zip");
    expect(parseAllowNet("github.io,*.pythonhosted.org,*.example.co.uk,*.test").map((r) => r.host)).toEqual([
      "github.io",
      "*.pythonhosted.org",
      "*.example.co.uk",
      "*.test",
    ]);
  });

  it("says a URL in the library's network.rules is not a host, with the host to write", async () => {
    await expect(
      resolveNetworkOptions({
        mode: "allowlist",
        rules: [{ host: "https://pypi.org/simple", ports: [443], decision: "allow" }],
      }),
    ).rejects.toThrow(
      'network.rules[0].host "https://pypi.org/simple": a host pattern is wanted, not a URL: write pypi.org (ports 80 and 443) or pypi.org:443; the gateway allows hosts and ports, not paths.',
    );
  });

  it("refuses the same wildcard in the library's network.rules", async () => {
    await expect(
      resolveNetworkOptions({
        mode: "allowlist",
        rules: [{ host: "*.com", ports: [443], decision: "allow" }],
      }),
    ).rejects.toThrow(
      "network.rules[0].host: *.com covers every domain under com, a public suffix (Public Suffix List), each with another owner; name the domain you need instead, e.g. example.com or *.example.com.",
    );
  });
});

describe("matching and decisions", () => {
  it("matches a wildcard's subdomains only, not the bare domain nor look-alikes", () => {
    expect(hostMatches("*.pythonhosted.org", "files.pythonhosted.org")).toBe(true);
    expect(hostMatches("*.pythonhosted.org", "a.b.pythonhosted.org")).toBe(true);
    expect(hostMatches("*.pythonhosted.org", "pythonhosted.org")).toBe(false);
    expect(hostMatches("*.pythonhosted.org", "evilpythonhosted.org")).toBe(false);
    expect(hostMatches("pypi.org", "PyPI.org.")).toBe(true);
    expect(hostMatches("pypi.org", "pypi.org.evil")).toBe(false);
  });

  it("takes the strictest matching rule: deny beats ask beats allow; unlisted is denied", () => {
    expect(decideConnection(rules, "pypi.org", 443)).toEqual({
      decision: "allow",
      rule: "allow pypi.org:443",
    });
    expect(decideConnection(rules, "pypi.org", 80)).toEqual({ decision: "deny", rule: "not-listed" });
    expect(decideConnection(rules, "www.evil.example", 443)).toEqual({
      decision: "deny",
      rule: "deny *.evil.example:443",
    });
    expect(decideConnection(rules, "ask.example", 80)).toEqual({
      decision: "ask",
      rule: "ask ask.example:80+443",
    });
    expect(decideConnection(rules, "example.com", 443)).toEqual({ decision: "deny", rule: "not-listed" });
  });
});

describe("squid.conf", () => {
  const conf = squidConfig({
    rules,
    refusedCidrs: ["10.0.0.0/8", "192.0.2.2/32"],
    clientCidrs: ["172.30.0.0/16"],
    port: 3128,
    askHelper: false,
    upstreamCa: false,
  });

  it("denies before it allows, checks refused addresses on every allow, and ends with deny all", () => {
    const access = conf.split("\n").filter((l) => l.startsWith("http_access"));
    expect(access[0]).toBe("http_access deny !session_net");
    expect(access[1]).toBe("http_access deny https_scheme !host_matches_sni");
    expect(access[2]).toBe("http_access deny r3_host");
    expect(access[3]).toBe("http_access deny r2_host r2_port"); // ask without an approver
    expect(access.at(-1)).toBe("http_access deny all");
    for (const l of access.filter((a) => a.startsWith("http_access allow")))
      expect(l).toMatch(/ !refused_dst$/);
    expect(conf).toContain("acl refused_dst dst 10.0.0.0/8 192.0.2.2/32");
    expect(conf).toContain("acl session_net src 172.30.0.0/16");
  });

  it("anchors host regexes and opens only a tunnel whose SNI equals its CONNECT host", () => {
    expect(conf).toContain("acl r0_host dstdom_regex -n -i ^pypi\\.org$");
    expect(conf).toContain("acl r1_host dstdom_regex -n -i ^([a-z0-9-]+\\.)+pythonhosted\\.org$");
    expect(conf).toMatch(/ssl_bump peek step1\nssl_bump bump sni_matches_host\nssl_bump terminate all\n$/);
  });
});

describe("access-log lines", () => {
  const at = "1796123438.763";
  const line = (rest: string) => `WARDEN-AUDIT ${at} ${rest}`;
  it("turns a forwarded request and a spliced tunnel into allow records, skipping the peek step", () => {
    expect(
      parseAccessLine(line("GET pypi.org 443 TCP_MISS/200 140 245 19 - 203.0.113.66 - -"), "s1", rules),
    ).toEqual({
      sessionId: "s1",
      time: "2026-12-01T11:10:38.763Z",
      domain: "pypi.org",
      port: 443,
      method: "GET",
      decision: "allow",
      rule: "allow pypi.org:443",
      bytesOut: 140,
      bytesIn: 245,
      durationMs: 19,
      remoteAddress: "203.0.113.66",
    });
    expect(
      parseAccessLine(line("CONNECT pypi.org 443 NONE_NONE/200 37 0 87 pypi.org - splice -"), "s1", rules),
    ).toBeNull();
    expect(
      parseAccessLine(
        line("CONNECT pypi.org 443 TCP_TUNNEL/500 740 2148 21 pypi.org 203.0.113.66 splice -"),
        "s1",
        rules,
      ),
    ).toMatchObject({ decision: "allow", sni: "pypi.org", bytesOut: 740, bytesIn: 2148 });
  });

  it("names why a listed name was refused: SNI mismatch, refused address, no approval; IP literals", () => {
    const rule = (l: string) => parseAccessLine(line(l), "s", rules)?.rule;
    expect(rule("CONNECT pypi.org 443 NONE_NONE/200 61 0 20 other.test - terminate -")).toBe(
      "sni-mismatch (allow pypi.org:443)",
    );
    // A tunnel carrying plain HTTP, no TLS: peeked, never opened; no SNI to match the CONNECT host.
    expect(rule("CONNECT pypi.org 443 NONE_NONE/200 59 0 5 - - peek -")).toBe(
      "sni-mismatch (allow pypi.org:443)",
    );
    expect(rule("CONNECT pypi.org 443 TCP_DENIED/200 37 0 9 pypi.org - bump -")).toBe(
      "refused-address (allow pypi.org:443)",
    );
    // Under an ask rule, refused without a question (the name resolved to a refused address).
    expect(rule("CONNECT ask.example 443 TCP_DENIED/200 37 0 9 ask.example - bump -")).toBe(
      "refused-address (ask ask.example:80+443)",
    );
    expect(rule("GET 203.0.113.66 80 TCP_DENIED/403 140 3410 0 - - - -")).toBe("ip-literal");
    expect(rule("GET other.test 80 TCP_DENIED/403 136 3406 1 - - - -")).toBe("not-listed");
    expect(parseAccessLine("2026/12/01 11:08:01| Store logging disabled", "s", rules)).toBeNull();
  });
});

describe("SandboxOptions.network", () => {
  it("defaults to none and refuses a bad rule, naming the field", async () => {
    expect(await resolveNetworkOptions(undefined)).toEqual({ mode: "none" });
    await expect(
      resolveNetworkOptions({
        mode: "allowlist",
        rules: [{ host: "1.2.3.4", ports: [443], decision: "allow" }],
      }),
    ).rejects.toThrow(/network.rules\[0\].host "1.2.3.4" must be a domain name, not an IP address/);
    await expect(
      resolveNetworkOptions({ mode: "allowlist", rules: [{ host: "a.org", ports: [], decision: "allow" }] }),
    ).rejects.toThrow(/network.rules\[0\].ports must be a non-empty list/);
    await expect(resolveNetworkOptions({ mode: "open" } as never)).rejects.toThrow(
      /network.mode must be "none" or "allowlist"/,
    );
  });
});
