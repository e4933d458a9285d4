/** A policy file's `network:` section: parsing, load errors with file:line:col, and layering (strictest wins). */
import { describe, expect, it } from "vitest";
import { networkOptionsOf } from "../../../src/cli/flags/network-flags.js";
import { decideConnection, parseAllowNet } from "../../../src/egress/index.js";
import { effectiveNetworkRules, parsePolicyText } from "../../../src/policy/index.js";

const file = (network: string) => `rules: []\nnetwork:\n${network}`;

describe("policy network: section", () => {
  it("loads allow, ask and deny entries as rules", () => {
    const layer = parsePolicyText(
      file('  allow: [pypi.org, "*.pythonhosted.org:443"]\n  deny: [evil.example]\n'),
      "p.yaml",
    );
    expect(layer.network).toEqual([
      { host: "pypi.org", ports: [80, 443], decision: "allow", source: "network.allow[0]" },
      { host: "*.pythonhosted.org", ports: [443], decision: "allow", source: "network.allow[1]" },
      { host: "evil.example", ports: [80, 443], decision: "deny", source: "network.deny[0]" },
    ]);
    expect(parsePolicyText("rules: []\n", "p.yaml").network).toBeUndefined();
  });

  it("is a load error at the bad entry's file:line:col", () => {
    expect(() => parsePolicyText(file("  allow:\n    - pypi.org\n    - 10.0.0.1\n"), "p.yaml")).toThrow(
      'p.yaml:5:7: network.allow[1] "10.0.0.1": the host must be a domain name, not an IP address (the gateway refuses IP literals).',
    );
    expect(() => parsePolicyText(file("  allwo: [pypi.org]\n"), "p.yaml")).toThrow(
      /p\.yaml:3:3: unknown key 'allwo' in network/,
    );
    expect(() => parsePolicyText(file("  allow: pypi.org\n"), "p.yaml")).toThrow(
      /p\.yaml:3:10: network\.allow/,
    );
  });
});

describe("layering", () => {
  const operator = parseAllowNet("pypi.org:443,*.pythonhosted.org:443,github.com");
  it("keeps only what every layer allows; a lower layer narrows, never widens", () => {
    const session = parseAllowNet("pypi.org,files.pythonhosted.org:443,evil.example");
    const rules = effectiveNetworkRules([operator, session]);
    expect(decideConnection(rules, "pypi.org", 443).decision).toBe("allow");
    expect(decideConnection(rules, "pypi.org", 80).decision).toBe("deny"); // operator: 443 only
    expect(decideConnection(rules, "files.pythonhosted.org", 443).decision).toBe("allow");
    expect(decideConnection(rules, "other.pythonhosted.org", 443).decision).toBe("deny"); // session narrowed the wildcard
    expect(decideConnection(rules, "evil.example", 443).decision).toBe("deny"); // session cannot widen
    expect(decideConnection(rules, "github.com", 443).decision).toBe("deny"); // session did not ask for it
  });

  it("lets a deny or ask of any layer win", () => {
    const tenant = [
      { host: "github.com", ports: [443], decision: "ask" as const },
      { host: "pypi.org", ports: [443], decision: "allow" as const },
      { host: "bad.pythonhosted.org", ports: [443], decision: "deny" as const },
      { host: "*.pythonhosted.org", ports: [443], decision: "allow" as const },
    ];
    const rules = effectiveNetworkRules([operator, tenant]);
    expect(decideConnection(rules, "github.com", 443).decision).toBe("ask");
    expect(decideConnection(rules, "bad.pythonhosted.org", 443).decision).toBe("deny");
    expect(decideConnection(rules, "x.pythonhosted.org", 443).decision).toBe("allow");
    expect(effectiveNetworkRules([])).toEqual([]);
  });

  it("gives the CLI no network without --allow-net or a policy section, and bounds --allow-net by the policy", () => {
    expect(networkOptionsOf({})).toBeUndefined();
    const bounded = networkOptionsOf({ allowNet: ["pypi.org:443,evil.example"] }, [operator]);
    expect(
      bounded?.mode === "allowlist" && bounded.rules.map((r) => `${r.decision} ${r.host}:${r.ports}`),
    ).toEqual(["allow pypi.org:443"]);
    // --allow-net under a policy that lists none of it: an error naming the layer, never a silent offline session.
    expect(() =>
      networkOptionsOf({ allowNet: ["evil.example"] }, [operator], ["operator.yaml (operator)"]),
    ).toThrow(
      "The network layers allow no host together: operator.yaml (operator) allows pypi.org:443, *.pythonhosted.org:443, github.com:80+443; --allow-net allows evil.example:80+443. A connection must be allowed by every layer (each policy file's network: section and --allow-net); ask for a host every layer allows, or widen the layer that leaves it out.",
    );
    expect(() =>
      networkOptionsOf({ allowNet: ["evil.example"], egressNetwork: ["net1"] }, [operator]),
    ).toThrow("The network layers allow no host together");
    // Nothing asked for (only denies): no network, as before.
    expect(
      networkOptionsOf({}, [[{ host: "evil.example", ports: [443], decision: "deny" }]]),
    ).toBeUndefined();
  });
});
