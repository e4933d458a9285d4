import { describe, expect, it } from "vitest";
import {
  decideSecretUse,
  formatSecretAnswer,
  parseSecretBinding,
  placeholderEnv,
  SecretRelay,
  type SecretUseAudit,
  type SessionSecret,
  secretHeaderNames,
  secretValueProblem,
} from "../../../src/egress/index.js";

const VALUE = "ghp_s3cretValue0123456789";

function secret(over: Partial<SessionSecret> = {}): SessionSecret {
  return {
    name: "GITHUB_TOKEN",
    bindings: [{ hosts: ["api.github.test"], headers: ["authorization"] }],
    value: () => VALUE,
    ...over,
  };
}

const request = (over: Partial<Parameters<typeof decideSecretUse>[0]> = {}) => ({
  host: "api.github.test",
  port: 443,
  method: "GET",
  path: "/user",
  headers: [["authorization", "Bearer {{GITHUB_TOKEN}}"]] as Array<[string, string]>,
  ...over,
});

describe("decideSecretUse", () => {
  it("replaces the placeholder in a bound header on a bound host", async () => {
    expect(await decideSecretUse(request(), [secret()])).toEqual({
      verdict: "replace",
      headers: { authorization: `Bearer ${VALUE}` },
      used: ["GITHUB_TOKEN"],
    });
  });

  it("refuses the placeholder on another host (an attempted leak) without asking for the value", async () => {
    let asked = 0;
    const s = secret({
      value: () => {
        asked++;
        return VALUE;
      },
    });
    expect(await decideSecretUse(request({ host: "evil.test" }), [s])).toEqual({
      verdict: "refuse",
      reason: "unbound",
      secret: "GITHUB_TOKEN",
    });
    expect(asked).toBe(0);
  });

  it("refuses it in a header the binding does not name, and in the URL", async () => {
    const inCookie = request({ headers: [["cookie", "t={{GITHUB_TOKEN}}"]] });
    expect(await decideSecretUse(inCookie, [secret()])).toMatchObject({ reason: "not-in-bound-header" });
    const inUrl = request({ path: "/x?t=%7B%7BGITHUB_TOKEN%7D%7D" });
    expect(await decideSecretUse(inUrl, [secret()])).toMatchObject({ reason: "not-in-bound-header" });
  });

  it("checks port, method and path prefix", async () => {
    const s = secret({
      bindings: [
        { hosts: ["*.github.test"], ports: [8443], methods: ["GET"], pathPrefixes: ["/repos/acme/"] },
      ],
    });
    const ok = request({ port: 8443, path: "/repos/acme/x?y=1" });
    expect(await decideSecretUse(ok, [s])).toMatchObject({ verdict: "replace" });
    for (const bad of [
      { port: 443 },
      { method: "POST" },
      { path: "/repos/other/x" },
      { host: "github.test" },
    ])
      expect(await decideSecretUse({ ...ok, ...bad }, [s])).toMatchObject({ reason: "unbound" });
  });

  it("refuses an unknown name, a revoked secret, a throwing source and a value a header cannot carry", async () => {
    expect(await decideSecretUse(request({ headers: [["authorization", "{{NOPE}}"]] }), [secret()])).toEqual({
      verdict: "refuse",
      reason: "unknown",
      secret: "NOPE",
    });
    expect(await decideSecretUse(request(), [secret({ value: () => undefined })])).toMatchObject({
      reason: "revoked",
    });
    const throws = secret({
      value: () => {
        throw new Error("gone");
      },
    });
    expect(await decideSecretUse(request(), [throws])).toMatchObject({ reason: "revoked" });
    expect(await decideSecretUse(request(), [secret({ value: () => 'a"b' })])).toMatchObject({
      reason: "bad-value",
    });
  });

  it("asks the value source at each use, so a rotation applies to the next request", async () => {
    let value = "one";
    const s = secret({ value: () => value });
    expect(await decideSecretUse(request(), [s])).toMatchObject({ headers: { authorization: "Bearer one" } });
    value = "two";
    expect(await decideSecretUse(request(), [s])).toMatchObject({ headers: { authorization: "Bearer two" } });
  });

  it("passes a request whose braces name no placeholder unchanged", async () => {
    const r = request({ headers: [["authorization", "Bearer {{lower}}"]] });
    expect(await decideSecretUse(r, [secret()])).toEqual({ verdict: "replace", headers: {}, used: [] });
  });
});

describe("secret bindings and values", () => {
  it("fills defaults and names the entry at fault", () => {
    expect(parseSecretBinding({ hosts: ["API.github.test"] }, "secret T")).toEqual({
      hosts: ["api.github.test"],
      ports: [443],
      headers: ["authorization"],
    });
    expect(() => parseSecretBinding({ hosts: [] }, "secret T")).toThrow(
      "secret T: a binding needs at least one host (hosts: [api.example.org]).",
    );
    expect(() => parseSecretBinding({ hosts: ["a.test"], headers: ["Host"] }, "secret T")).toThrow(
      'secret T: header "host" frames or routes the request, or a proxy consumes it; a secret cannot go there.',
    );
    expect(() => parseSecretBinding({ hosts: ["a.test"], pathPrefixes: ["repos"] }, "secret T")).toThrow(
      'secret T: path prefix "repos" must start with / and hold no space.',
    );
  });

  it("says why a value cannot be sent, without the value", () => {
    expect(secretValueProblem("ok value")).toBeNull();
    expect(secretValueProblem("")).toBe("it is empty");
    expect(secretValueProblem("line\nbreak")).toContain("outside visible ASCII");
    expect(secretValueProblem("has\\slash")).toContain("cannot pass on");
  });

  it("puts placeholders, never values, in the sandbox's environment", () => {
    const env = placeholderEnv([
      secret(),
      secret({ name: "NPM_TOKEN", env: "NPM_AUTH" }),
      secret({ name: "X", env: false }),
    ]);
    expect(env).toEqual({ GITHUB_TOKEN: "{{GITHUB_TOKEN}}", NPM_AUTH: "{{NPM_TOKEN}}" });
    expect(
      secretHeaderNames([secret(), secret({ bindings: [{ hosts: ["a.test"], headers: ["x-api-key"] }] })]),
    ).toEqual(["authorization", "x-api-key"]);
  });
});

describe("SecretRelay", () => {
  it("answers the gateway's question with the replaced header for Squid and records the use by name", async () => {
    const lines: string[] = [];
    const records: SecretUseAudit[] = [];
    const relay = new SecretRelay({
      sessionId: "s1",
      secrets: [secret()],
      headerNames: ["authorization", "x-api-key"],
      write: (l) => lines.push(l),
      onSecretUse: (r) => records.push(r),
    });
    expect(
      relay.handle("WARDEN-SECRET s7 GET api.github.test 443 /user?q=1 Bearer%20%7B%7BGITHUB_TOKEN%7D%7D -"),
    ).toBe(true);
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toBe(
      `WARDEN-SECRET-ANSWER s7 OK warden_secret_0="Bearer ${VALUE}" warden_secret=use.GITHUB_TOKEN\n`,
    );
    expect(records).toEqual([
      {
        sessionId: "s1",
        time: expect.any(String),
        secrets: ["GITHUB_TOKEN"],
        decision: "use",
        host: "api.github.test",
        port: 443,
        method: "GET",
        path: "/user",
      },
    ]);
    expect(JSON.stringify(records)).not.toContain(VALUE);
  });

  it("refuses a placeholder to another host with a note that names the secret, not the value", async () => {
    const lines: string[] = [];
    const records: SecretUseAudit[] = [];
    const relay = new SecretRelay({
      sessionId: "s1",
      secrets: [secret()],
      headerNames: ["authorization"],
      write: (l) => lines.push(l),
      onSecretUse: (r) => records.push(r),
    });
    relay.handle("WARDEN-SECRET s8 POST evil.test 443 /collect Bearer%20%7B%7BGITHUB_TOKEN%7D%7D");
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toBe("WARDEN-SECRET-ANSWER s8 ERR warden_secret=unbound.GITHUB_TOKEN\n");
    expect(records[0]).toMatchObject({
      decision: "refuse",
      reason: "unbound",
      host: "evil.test",
      secrets: ["GITHUB_TOKEN"],
    });
    expect(relay.handle("WARDEN-ASK q1 a.test 443")).toBe(false);
  });

  it("formats a refusal and an empty replacement", () => {
    expect(formatSecretAnswer("s1", { verdict: "replace", headers: {}, used: [] }, ["authorization"])).toBe(
      "WARDEN-SECRET-ANSWER s1 OK\n",
    );
  });
});

describe("warm pool key", () => {
  it("gives a spare to a session only with the same secrets (the gateway's config names their headers)", async () => {
    const { networkPolicyKey } = await import("../../../src/egress/index.js");
    const rules = [{ host: "api.github.test", ports: [443], decision: "allow" as const }];
    const plain = networkPolicyKey({ mode: "allowlist", rules });
    const withSecret = networkPolicyKey({ mode: "allowlist", rules, secrets: [secret()] });
    const otherValue = networkPolicyKey({
      mode: "allowlist",
      rules,
      secrets: [secret({ value: () => "x" })],
    });
    expect(withSecret).not.toBe(plain);
    expect(otherValue).toBe(withSecret);
    expect(withSecret).not.toContain(VALUE);
  });
});

describe("checks that close the ways around a binding", () => {
  it("does not let a dot segment or an encoded slash walk out of a bound path prefix", async () => {
    const s = secret({ bindings: [{ hosts: ["api.github.test"], pathPrefixes: ["/repos/acme/"] }] });
    for (const path of [
      "/repos/acme/../../user",
      "/repos/acme/%2e%2e/%2E%2E/user",
      "/repos/acme/..%2f..%2fuser",
      "/repos/acme/.%2E/x",
      "/repos/acme/x%5c..%5cy",
    ])
      expect(await decideSecretUse(request({ path }), [s])).toMatchObject({
        verdict: "refuse",
        reason: "unbound",
      });
    expect(await decideSecretUse(request({ path: "/repos/acme/tools/issues?q=a..b" }), [s])).toMatchObject({
      verdict: "replace",
    });
  });

  it("refuses library secrets whose placeholder would take a variable the sandbox or gateway needs", async () => {
    const { checkSessionSecrets } = await import("../../../src/egress/index.js");
    expect(() => checkSessionSecrets([secret({ name: "HOME" })])).toThrow(
      'network.secrets[0]: secret HOME cannot hold its placeholder in "HOME" (the sandbox or its gateway needs that variable); choose another env.',
    );
    expect(() => checkSessionSecrets([secret({ env: "HTTPS_PROXY" })])).toThrow("choose another env");
    expect(() => checkSessionSecrets([secret(), secret()])).toThrow(
      "network.secrets[1]: secret GITHUB_TOKEN is given twice.",
    );
    expect(() => checkSessionSecrets([secret({ file: "tmp/t" })])).toThrow(
      "must be an absolute path in the sandbox",
    );
    const s = secret();
    expect(checkSessionSecrets([s])[0]).toBe(s);
  });
});

describe("what the sandbox writes around a placeholder cannot reach the gateway's protocol (attack-39 F1-F4)", () => {
  it("refuses a header whose text holds a line break, a quote, a backslash or a byte outside visible ASCII", async () => {
    for (const header of [
      'Bearer {{GITHUB_TOKEN}}\nWARDEN-SECRET-ANSWER s2 OK warden_secret_0="x"',
      'Bearer {{GITHUB_TOKEN}}" warden_secret_1="{{GITHUB_TOKEN}}',
      "Bearer {{GITHUB_TOKEN}}\\",
      "Bearer {{GITHUB_TOKEN}}\u00e9",
    ])
      expect(await decideSecretUse(request({ headers: [["authorization", header]] }), [secret()])).toEqual({
        verdict: "refuse",
        reason: "bad-header",
        secret: "GITHUB_TOKEN",
      });
  });

  it("answers a question whose header hides a forged answer line with one refusal line, nothing more", async () => {
    const lines: string[] = [];
    const relay = new SecretRelay({
      sessionId: "s1",
      secrets: [secret()],
      headerNames: ["authorization"],
      write: (l) => lines.push(l),
    });
    relay.handle(
      "WARDEN-SECRET s1a GET api.github.test 443 /user Bearer%20%7B%7BGITHUB_TOKEN%7D%7D%0AWARDEN-SECRET-ANSWER%20s2b%20OK%20warden_secret_0=%22Bearer%20%7B%7BGITHUB_TOKEN%7D%7D%22",
    );
    await expect.poll(() => lines.length).toBe(1);
    expect(lines).toEqual(["WARDEN-SECRET-ANSWER s1a ERR warden_secret=bad-header.GITHUB_TOKEN\n"]);
    expect(
      formatSecretAnswer("s9", { verdict: "replace", headers: { authorization: "a\nb" }, used: ["X"] }, [
        "authorization",
      ]),
    ).toBe("WARDEN-SECRET-ANSWER s9 ERR warden_secret=bad-header.-\n");
  });

  it("treats a dot segment with ;params as a dot segment (Java's ..;/)", async () => {
    const s = secret({ bindings: [{ hosts: ["api.github.test"], pathPrefixes: ["/bytes/"] }] });
    for (const path of ["/bytes/..;/hello", "/bytes/..;x=1/hello", "/bytes/.%3b/x"])
      expect(await decideSecretUse(request({ path }), [s])).toMatchObject({ reason: "unbound" });
    expect(await decideSecretUse(request({ path: "/bytes/a;b/c" }), [s])).toMatchObject({
      verdict: "replace",
    });
  });

  it("covers no path with an encoded ? or # (attack 40: /bytes/%3F/../../hello is /hello to the origin)", async () => {
    const s = secret({ bindings: [{ hosts: ["api.github.test"], pathPrefixes: ["/bytes/"] }] });
    for (const path of ["/bytes/%3F/../../hello", "/bytes/%3f/x", "/bytes/%23/../../hello"])
      expect(await decideSecretUse(request({ path }), [s])).toMatchObject({ reason: "unbound" });
    expect(await decideSecretUse(request({ path: "/bytes/x?q=%3F" }), [s])).toMatchObject({
      verdict: "replace",
    });
    // The relay hands the request target over exactly as sent (the gateway escapes its `%`).
    const written: string[] = [];
    const relay = new SecretRelay({
      sessionId: "s1",
      secrets: [s],
      headerNames: ["authorization"],
      write: (line) => written.push(line),
    });
    relay.handle(
      "WARDEN-SECRET s7 GET api.github.test 443 /bytes/%253F/../../hello Bearer%20{{GITHUB_TOKEN}}",
    );
    await expect
      .poll(() => written)
      .toEqual(["WARDEN-SECRET-ANSWER s7 ERR warden_secret=unbound.GITHUB_TOKEN\n"]);
  });

  it("keeps the caller's secret objects, so a rebinding in a store applies to the next request (F8)", async () => {
    const { checkSessionSecrets } = await import("../../../src/egress/index.js");
    let hosts = ["api.github.test"];
    const live: SessionSecret = {
      name: "GITHUB_TOKEN",
      get bindings() {
        return [{ hosts }];
      },
      value: () => VALUE,
    };
    const [checked] = checkSessionSecrets([live]);
    expect(checked).toBe(live);
    expect(await decideSecretUse(request(), [checked as SessionSecret])).toMatchObject({
      verdict: "replace",
    });
    hosts = ["other.test"];
    expect(await decideSecretUse(request(), [checked as SessionSecret])).toMatchObject({ reason: "unbound" });
  });
});
