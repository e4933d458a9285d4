/**
 * Secrets at the egress gateway against a real engine (docs/secrets.md): the sandbox holds only
 * placeholders; the gateway puts the value into the bound header of requests to the bound host,
 * and refuses (and records) a placeholder sent anywhere else. The test host records the headers
 * it receives. Rotation and revocation apply to the next request; the value is in no environment,
 * file, process memory or audit record of the sandbox's side.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ConnectionAudit, SecretUseAudit } from "../../../src/egress/index.js";
import { createSandbox, getDocker } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("secrets");

/** `fetch URL [HEADER=VALUE…]` (values may hold `$VAR`, expanded from the sandbox's env): one line, `OK <status>` or `ERR <status>`. */
const FETCH = `
import os, sys, urllib.request, urllib.error
url, pairs = sys.argv[1], sys.argv[2:]
headers = {k: os.path.expandvars(v) for k, v in (p.split("=", 1) for p in pairs)}
try:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=8) as r: print("OK", r.status)
except urllib.error.HTTPError as e: print("ERR", e.code)
except Exception as e: print("ERR", type(e).__name__)
`;

/**
 * Makes a request with the placeholder, then writes this process's own writable memory (heap,
 * stack, anonymous mappings: where a received or computed value would be) to /tmp/mem.bin for the
 * test to search on the host, so the values searched for never enter the sandbox.
 */
const MEMDUMP = `
import os, re, urllib.request
req = urllib.request.Request("https://allowed.test/hello", headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
urllib.request.urlopen(req, timeout=8).read()
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem, open("/tmp/mem.bin", "wb") as out:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) rw", line)
        if not m: continue
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        try: mem.seek(start); out.write(mem.read(end - start))
        except OSError: pass
print(os.path.getsize("/tmp/mem.bin") > 1000000)
`;

describeEngine("secrets: placeholders in the sandbox, values only at the bound host", () => {
  let bed: EgressTestbed;
  let sandbox: Sandbox;
  let value: string | undefined = "ghp_FirstValue0123456789abcdef";
  const firstValue = value as string;
  const uses: SecretUseAudit[] = [];
  const audit: ConnectionAudit[] = [];
  const fetch = async (url: string, ...headers: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/fetch.py", url, ...headers] })).stdout.trim();
  /** The headers the public host received for requests to `path`, in order. */
  const received = async (path: string) =>
    (await bed.hostLog("public", "headers"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as [string, Array<[string, string]>])
      .filter(([p]) => p === path)
      .map(([, h]) => Object.fromEntries(h.map(([k, v]) => [k.toLowerCase(), v])));

  beforeAll(async () => {
    bed = await startEgressTestbed();
    sandbox = await createSandbox({
      tenant,
      ttlMs: 180_000,
      network: {
        mode: "allowlist",
        rules: [
          { host: "allowed.test", ports: [80, 443], decision: "allow" },
          { host: "other.test", ports: [443], decision: "allow" },
        ],
        egressNetworks: [bed.publicNetwork],
        caBundlePath: bed.caBundlePath,
        onConnection: (r) => audit.push(r),
        onSecretUse: (r) => uses.push(r),
        secrets: [
          { name: "GITHUB_TOKEN", bindings: [{ hosts: ["allowed.test"] }], value: () => value },
          {
            name: "API_KEY",
            env: "SERVICE_KEY",
            file: "/tmp/secrets/api-key",
            bindings: [{ hosts: ["allowed.test"], headers: ["x-api-key"], pathPrefixes: ["/bytes/"] }],
            value: () => "key-Second-0123456789",
          },
        ],
      },
    });
    await sandbox.writeFile("/tmp/fetch.py", Buffer.from(FETCH));
    await sandbox.writeFile("/tmp/memdump.py", Buffer.from(MEMDUMP));
  }, 120_000);

  afterAll(async () => {
    await sandbox?.destroy();
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("gives the sandbox placeholders only, in its environment and in a file", async () => {
    const env = await run(sandbox, { argv: ["sh", "-c", 'echo "$GITHUB_TOKEN $SERVICE_KEY"'] });
    expect(env.stdout.trim()).toBe("{{GITHUB_TOKEN}} {{API_KEY}}");
    // The file form: exactly the placeholder, no newline.
    const file = await sandbox.readFile("/tmp/secrets/api-key", { kind: "bytes", offset: 0, length: 100 });
    expect(file.data.toString("utf8")).toBe("{{API_KEY}}");
  });

  it("puts the value into the bound header at the bound host, over HTTPS", async () => {
    expect(await fetch("https://allowed.test/hello", "Authorization=Bearer $GITHUB_TOKEN")).toBe("OK 200");
    expect((await received("/hello")).map((h) => h.authorization)).toEqual([`Bearer ${firstValue}`]);
    expect(uses).toEqual([
      expect.objectContaining({
        decision: "use",
        secrets: ["GITHUB_TOKEN"],
        host: "allowed.test",
        port: 443,
        method: "GET",
        path: "/hello",
      }),
    ]);
    await expect
      .poll(() => audit.find((r) => r.domain === "allowed.test" && r.method === "GET"))
      .toMatchObject({ decision: "allow", secrets: ["GITHUB_TOKEN"], insideTunnel: true });
  });

  it("puts a value into a header of another name, only under the bound path", async () => {
    expect(await fetch("https://allowed.test/bytes/3", "X-Api-Key=$SERVICE_KEY")).toBe("OK 200");
    expect((await received("/bytes/3")).map((h) => h["x-api-key"])).toEqual(["key-Second-0123456789"]);
    expect(await fetch("https://allowed.test/hello?k=1", "X-Api-Key=$SERVICE_KEY")).toBe("ERR 403");
    expect(uses.at(-1)).toMatchObject({
      decision: "refuse",
      reason: "unbound",
      secrets: ["API_KEY"],
      path: "/hello",
    });
  });

  it("refuses the placeholder sent to another allowed host, and records it as an attempted leak", async () => {
    const before = (await bed.hostLog("public", "requests")).split("\n").length;
    expect(await fetch("https://other.test/hello", "Authorization=Bearer $GITHUB_TOKEN")).toBe("ERR 403");
    expect(await fetch("http://allowed.test/hello", "Authorization=Bearer $GITHUB_TOKEN")).toBe("ERR 403");
    expect((await bed.hostLog("public", "requests")).split("\n").length).toBe(before);
    expect(uses.slice(-2)).toEqual([
      expect.objectContaining({ decision: "refuse", reason: "unbound", host: "other.test", port: 443 }),
      expect.objectContaining({ decision: "refuse", reason: "unbound", host: "allowed.test", port: 80 }),
    ]);
    await expect
      .poll(() => audit.find((r) => r.domain === "other.test" && r.method === "GET"))
      .toMatchObject({
        decision: "deny",
        refusal: "secret",
        rule: "secret unbound GITHUB_TOKEN (allow other.test:443)",
      });
    // Without a placeholder the same host is reachable: the refusal was the placeholder's.
    expect(await fetch("https://other.test/hello")).toBe("OK 200");
  });

  it("refuses a placeholder whose header text could forge the gateway's answers (quote, backslash), and passes an escaped line break as text", async () => {
    const before = (await received("/hello")).length;
    for (const header of [
      'Authorization=Bearer $GITHUB_TOKEN" warden_secret_1="$GITHUB_TOKEN',
      "Authorization=Bearer $GITHUB_TOKEN\\",
    ])
      expect(await fetch("https://allowed.test/hello", header)).toBe("ERR 403");
    expect((await received("/hello")).length).toBe(before);
    expect(uses.slice(-2).map((u) => [u.decision, u.reason])).toEqual([
      ["refuse", "bad-header"],
      ["refuse", "bad-header"],
    ]);
    // `%0A` in a header is three characters, never a line break: the question carries the header
    // exactly (images/gateway/secrets.go escapes `%`), so no answer line can be forged with it,
    // and the bound host gets the text as written, after the value.
    expect(
      await fetch(
        "https://allowed.test/hello",
        "Authorization=Bearer $GITHUB_TOKEN%0AWARDEN-SECRET-ANSWER s1 OK",
      ),
    ).toBe("OK 200");
    expect((await received("/hello")).at(-1)?.authorization).toBe(
      `Bearer ${firstValue}%0AWARDEN-SECRET-ANSWER s1 OK`,
    );
  });

  it("applies a rotation to the next request, and refuses a revoked secret", async () => {
    value = "ghp_RotatedValue9876543210zyxwvu";
    expect(await fetch("https://allowed.test/hello", "Authorization=Bearer $GITHUB_TOKEN")).toBe("OK 200");
    expect((await received("/hello")).at(-1)?.authorization).toBe("Bearer ghp_RotatedValue9876543210zyxwvu");
    value = undefined;
    expect(await fetch("https://allowed.test/hello", "Authorization=Bearer $GITHUB_TOKEN")).toBe("ERR 403");
    expect(uses.at(-1)).toMatchObject({ decision: "refuse", reason: "revoked", secrets: ["GITHUB_TOKEN"] });
    value = firstValue;
  });

  it("leaves the value nowhere on the sandbox's side: environment, files, its own memory, the records", async () => {
    const needles = [
      firstValue,
      Buffer.from(firstValue).toString("base64"),
      encodeURIComponent(`Bearer ${firstValue}`),
    ];
    const dump = await run(sandbox, { argv: ["python3", "/tmp/memdump.py"] });
    expect(dump.stdout.trim()).toBe("True");
    const memory = (await sandbox.readFile("/tmp/mem.bin", { kind: "bytes", offset: 0, length: 60 << 20 }))
      .data;
    expect(memory.includes("{{GITHUB_TOKEN}}")).toBe(true);
    for (const n of needles) expect(memory.includes(n)).toBe(false);
    await run(sandbox, { argv: ["rm", "/tmp/mem.bin"] });
    const grep = await run(sandbox, {
      argv: [
        "sh",
        "-c",
        `cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -F -e "${firstValue}"; grep -rlsF -e "${firstValue}" /etc /tmp /home /root /run /var /opt /workspace | wc -l`,
      ],
    });
    expect(grep.stdout.trim().split("\n")).toEqual(["0", "0"]);
    const inspect = JSON.stringify(await getDocker().getContainer(sandbox.info.containerId).inspect());
    for (const n of needles) {
      expect(inspect).not.toContain(n);
      expect(JSON.stringify(audit)).not.toContain(n);
      expect(JSON.stringify(uses)).not.toContain(n);
    }
    // The bound host did receive it: the search above looks for the right bytes.
    expect((await received("/hello")).some((h) => h.authorization === `Bearer ${firstValue}`)).toBe(true);
  });
});
