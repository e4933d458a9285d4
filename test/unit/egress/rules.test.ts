/** Network rule parsing and matching (src/egress/); the gateway's records: connection-records.test.ts. */
import { describe, expect, it } from "vitest";
import {
  decideConnection,
  hostMatches,
  networkPolicyKey,
  parseAllowNet,
  parseHostEntry,
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

  it("takes resolvers as IPv4 addresses only, and keys warm-pool spares by them", async () => {
    const with_ = (resolvers: unknown) =>
      resolveNetworkOptions({ mode: "allowlist", rules, resolvers } as never);
    await expect(with_(["10.0.0.53"])).resolves.toMatchObject({ resolvers: ["10.0.0.53"] });
    await expect(with_(["dns.example"])).rejects.toThrow(
      'network.resolvers[0] "dns.example" is not an IPv4 address; name a DNS server by its address, e.g. 10.0.0.53.',
    );
    await expect(with_("10.0.0.53")).rejects.toThrow("network.resolvers must be a list of IPv4 addresses.");
    expect(networkPolicyKey({ mode: "allowlist", rules, resolvers: ["10.0.0.53"] })).not.toBe(
      networkPolicyKey({ mode: "allowlist", rules }),
    );
  });
});
