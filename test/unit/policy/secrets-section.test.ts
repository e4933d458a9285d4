/** A policy file's `secrets:` section: what it loads as, and its load errors at file:line:col. */
import { describe, expect, it } from "vitest";
import { parsePolicyText } from "../../../src/policy/index.js";

const file = (secrets: string) => `rules: []\nsecrets:\n${secrets}`;

describe("policy secrets: section", () => {
  it("loads each name's binding with the defaults filled in (ports [443], headers [authorization])", () => {
    const layer = parsePolicyText(
      file(
        [
          "  GITHUB_TOKEN:",
          "    hosts: [api.github.com, API.GitHub.com, '*.github.example']",
          "  NPM_TOKEN:",
          "    hosts: [registry.npmjs.org]",
          "    ports: [8443, 443, 443]",
          "    methods: [get, PUT]",
          "    pathPrefixes: [/@acme/, /-/whoami]",
          "    headers: [Authorization, X-Npm-Token]",
          "",
        ].join("\n"),
      ),
      "p.yaml",
    );
    expect(layer.secrets).toEqual({
      GITHUB_TOKEN: {
        hosts: ["api.github.com", "*.github.example"],
        ports: [443],
        headers: ["authorization"],
      },
      NPM_TOKEN: {
        hosts: ["registry.npmjs.org"],
        ports: [443, 8443],
        methods: ["GET", "PUT"],
        pathPrefixes: ["/@acme/", "/-/whoami"],
        headers: ["authorization", "x-npm-token"],
      },
    });
  });

  it("tells a layer without the section (abstains) from one with an empty section (withholds every secret)", () => {
    expect(parsePolicyText("rules: []\n", "p.yaml").secrets).toBeUndefined();
    expect(parsePolicyText("rules: []\nsecrets: {}\n", "p.yaml").secrets).toEqual({});
  });

  it("reports every bad entry at its file:line:col, naming what was wrong and the fix", () => {
    const text = file(
      [
        "  github_token:", // line 3
        "    hosts: [api.github.com]",
        "  TOKEN:", // line 5
        "    hosts:",
        "      - api.github.com:443", // line 7
        "      - https://api.github.com/repos", // line 8
        "      - 10.0.0.1", // line 9
        "      - '*.com'", // line 10
        "    methods: [GET, 'GE T']", // line 11
        "    pathPrefixes: [repos/, /a/../b, '/a?x=1']", // line 12
        "    headers: [Host, 'bad header']", // line 13
        "",
      ].join("\n"),
    );
    let message = "";
    try {
      parsePolicyText(text, "p.yaml");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split("\n")).toEqual([
      'p.yaml:3:3: secrets: "github_token" is not a secret name: upper-case letters, digits and _, starting with a letter, at most 64 characters (e.g. GITHUB_TOKEN).',
      'p.yaml:7:9: secrets.TOKEN.hosts[0] "api.github.com:443": write the host alone and its ports under ports:.',
      'p.yaml:8:9: secrets.TOKEN.hosts[1] "https://api.github.com/repos": a host pattern is wanted, not a URL: write the host (e.g. api.github.com), the path under pathPrefixes: and the port under ports:.',
      'p.yaml:9:9: secrets.TOKEN.hosts[2] "10.0.0.1": the host must be a domain name, not an IP address (the gateway refuses IP literals).',
      'p.yaml:10:9: secrets.TOKEN.hosts[3] "*.com": *.com covers every domain under com, a public suffix (Public Suffix List), each with another owner; name the domain you need instead, e.g. example.com or *.example.com.',
      'p.yaml:11:20: secrets.TOKEN.methods[1] "GE T": an HTTP method is letters only, e.g. GET.',
      'p.yaml:12:20: secrets.TOKEN.pathPrefixes[0] "repos/": a path prefix starts with / (e.g. /repos/acme/).',
      'p.yaml:12:28: secrets.TOKEN.pathPrefixes[1] "/a/../b": a path prefix has no . or .. segment (the origin would read it as another path).',
      'p.yaml:12:37: secrets.TOKEN.pathPrefixes[2] "/a?x=1": a path prefix has no query (?), fragment (#), space or control character.',
      'p.yaml:13:15: secrets.TOKEN.headers[0] "Host": the gateway routes and frames requests by this header, so no secret goes there; name the header that carries the credential (e.g. authorization).',
      'p.yaml:13:21: secrets.TOKEN.headers[1] "bad header": a header name is letters, digits and !#$%&\'*+.^_`|~- only.',
    ]);
  });

  it("words schema errors with the key meant and the key missing", () => {
    const fails = (secrets: string) => () => parsePolicyText(file(secrets), "p.yaml");
    expect(fails("  TOKEN:\n    hots: [api.github.com]\n")).toThrow(
      "p.yaml:4:5: unknown key 'hots' in secrets.TOKEN (did you mean 'hosts'?)",
    );
    expect(fails("  TOKEN:\n    ports: [443]\n")).toThrow(
      "p.yaml:4:5: secrets.TOKEN is missing required key(s): hosts",
    );
    expect(fails("  TOKEN:\n    hosts: []\n")).toThrow(
      "p.yaml:4:12: secrets.TOKEN.hosts: must not have fewer than 1 items",
    );
    expect(fails("  TOKEN:\n    hosts: [a.example]\n    ports: [0]\n")).toThrow(
      "p.yaml:5:13: secrets.TOKEN.ports[0]: must be >= 1",
    );
    expect(fails("  TOKEN: api.github.com\n")).toThrow("p.yaml:3:10: secrets.TOKEN: must be object");
    expect(fails("  TOKEN:\n    hosts: [a.example]\n    bogus: 1\n")).toThrow(
      "p.yaml:5:5: unknown key 'bogus' in secrets.TOKEN (known keys: hosts, ports, methods, pathPrefixes, headers)",
    );
  });
});
