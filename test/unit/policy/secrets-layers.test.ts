/**
 * Layering of `secrets:` sections, strictest wins: a secret is usable only for requests every layer
 * with a section binds it for; a layer whose section does not name it withholds it.
 */
import { describe, expect, it } from "vitest";
import {
  effectiveSecretBindings,
  intersectSecretBindings,
  parsePolicyText,
} from "../../../src/policy/index.js";

const layer = (secrets: string) => parsePolicyText(`rules: []\nsecrets:\n${secrets}`, "p.yaml").secrets ?? {};

describe("effectiveSecretBindings", () => {
  const operator = layer(
    [
      "  GITHUB_TOKEN:",
      "    hosts: [api.github.com, '*.github.example']",
      "    ports: [443, 8443]",
      "    headers: [authorization, x-token]",
      "  NPM_TOKEN:",
      "    hosts: [registry.npmjs.org]",
      "",
    ].join("\n"),
  );

  it("gives one layer's binding as it is, with defaults written out", () => {
    expect(effectiveSecretBindings([operator], "NPM_TOKEN")).toEqual([
      { hosts: ["registry.npmjs.org"], ports: [443], headers: ["authorization"] },
    ]);
    expect(effectiveSecretBindings([operator], "GITHUB_TOKEN")).toEqual([
      {
        hosts: ["api.github.com", "*.github.example"],
        ports: [443, 8443],
        headers: ["authorization", "x-token"],
      },
    ]);
  });

  it("narrows by every lower layer, never widens", () => {
    const project = layer(
      [
        "  GITHUB_TOKEN:",
        "    hosts: [api.github.com, evil.example, uploads.github.example]",
        "    ports: [443, 80]",
        "    methods: [GET]",
        "    pathPrefixes: [/repos/acme/]",
        "  NPM_TOKEN:",
        "    hosts: [registry.npmjs.org]",
        "",
      ].join("\n"),
    );
    expect(effectiveSecretBindings([operator, project], "GITHUB_TOKEN")).toEqual([
      {
        hosts: ["api.github.com", "uploads.github.example"],
        ports: [443],
        methods: ["GET"],
        pathPrefixes: ["/repos/acme/"],
        headers: ["authorization"],
      },
    ]);
  });

  it("lets a layer whose section does not name a secret withhold it; a layer without the section abstains", () => {
    const withholds = layer("  NPM_TOKEN:\n    hosts: [registry.npmjs.org]\n");
    expect(effectiveSecretBindings([operator, withholds], "GITHUB_TOKEN")).toEqual([]);
    expect(effectiveSecretBindings([{}, operator], "NPM_TOKEN")).toEqual([]); // `secrets: {}` withholds all
    expect(effectiveSecretBindings([], "NPM_TOKEN")).toEqual([]); // no layer binds it
    expect(effectiveSecretBindings([operator], "OTHER")).toEqual([]);
    expect(effectiveSecretBindings([operator], "constructor")).toEqual([]);
  });

  it("gives nothing when the layers share no host, port, method, path prefix or header", () => {
    const base = { hosts: ["a.example"], ports: [443], headers: ["authorization"] };
    const none = (other: object) => effectiveSecretBindings([{ T: base }, { T: { ...base, ...other } }], "T");
    expect(none({ hosts: ["b.example"] })).toEqual([]);
    expect(none({ ports: [8443] })).toEqual([]);
    expect(none({ headers: ["x-token"] })).toEqual([]);
    expect(
      effectiveSecretBindings(
        [{ T: { ...base, methods: ["GET"] } }, { T: { ...base, methods: ["POST"] } }],
        "T",
      ),
    ).toEqual([]);
    expect(
      effectiveSecretBindings(
        [{ T: { ...base, pathPrefixes: ["/a/"] } }, { T: { ...base, pathPrefixes: ["/b/"] } }],
        "T",
      ),
    ).toEqual([]);
  });
});

describe("intersectSecretBindings", () => {
  const hostsOf = (a: string[], b: string[]) =>
    intersectSecretBindings({ hosts: a }, { hosts: b })?.hosts ?? "none";
  it("keeps the narrower of two host patterns that overlap", () => {
    expect(hostsOf(["*.example.org"], ["api.example.org"])).toEqual(["api.example.org"]);
    expect(hostsOf(["api.example.org"], ["*.example.org"])).toEqual(["api.example.org"]);
    expect(hostsOf(["*.example.org"], ["*.api.example.org"])).toEqual(["*.api.example.org"]);
    expect(hostsOf(["*.api.example.org"], ["*.example.org"])).toEqual(["*.api.example.org"]);
    expect(hostsOf(["*.example.org"], ["example.org"])).toBe("none"); // a wildcard is subdomains only
    expect(hostsOf(["*.example.org"], ["*.xexample.org"])).toBe("none");
    expect(hostsOf(["a.example", "b.example"], ["b.example", "a.example"])).toEqual([
      "a.example",
      "b.example",
    ]);
  });

  const withPrefixes = (p: string[] | undefined) => ({
    hosts: ["h.example"],
    ...(p ? { pathPrefixes: p } : {}),
  });
  const prefixesOf = (a: string[] | undefined, b: string[] | undefined) => {
    const binding = intersectSecretBindings(withPrefixes(a), withPrefixes(b));
    return binding ? binding.pathPrefixes : "none";
  };
  it("keeps the longer path prefix only where it continues the shorter at a segment boundary", () => {
    expect(prefixesOf(["/repos/"], ["/repos/acme/"])).toEqual(["/repos/acme/"]);
    expect(prefixesOf(["/repos/acme"], ["/repos/acme/tools"])).toEqual(["/repos/acme/tools"]);
    expect(prefixesOf(["/repos/acme/tools"], ["/repos/acme"])).toEqual(["/repos/acme/tools"]);
    expect(prefixesOf(["/repos/acme"], ["/repos/acme"])).toEqual(["/repos/acme"]);
    // Inside one segment: none, narrower than the intersection, whichever way a prefix is matched.
    expect(prefixesOf(["/repos/acme"], ["/repos/acmex"])).toBe("none");
    expect(prefixesOf(["/repos/a/", "/users/"], ["/repos/a/b", "/users/c/"])).toEqual([
      "/repos/a/b",
      "/users/c/",
    ]);
    expect(prefixesOf(undefined, ["/users/"])).toEqual(["/users/"]);
    expect(prefixesOf(undefined, undefined)).toBeUndefined();
  });

  it("intersects ports, methods and headers with their defaults ([443], any, [authorization])", () => {
    expect(
      intersectSecretBindings(
        { hosts: ["h.example"] },
        { hosts: ["h.example"], ports: [80, 443], methods: ["GET"], headers: ["authorization", "x-token"] },
      ),
    ).toEqual({ hosts: ["h.example"], ports: [443], methods: ["GET"], headers: ["authorization"] });
    expect(
      intersectSecretBindings({ hosts: ["h.example"] }, { hosts: ["h.example"], ports: [80] }),
    ).toBeUndefined();
  });
});
