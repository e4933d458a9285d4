/**
 * Sessions with network from the warm pool (`warmPool.networked`, src/sandbox/pool/pooled-claims.ts):
 * a spare is prepared with its gateway started and bound to no session; the claim binds the
 * gateway to the claimer (EgressGateway.bind), so the claimer's approver is asked, its audit gets
 * the records and its secret values go out, never the first requester's (whose request filled the
 * key). The spare's gateway and network are removed with it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type ConnectionAudit,
  type NetworkApprovalRequest,
  type NetworkOptions,
  ROLE_LABEL,
  SESSION_LABEL,
} from "../../../src/egress/index.js";
import { dockerBackend, getDocker, LABEL, type SandboxBackend } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";
import { NET_CLIENT } from "./client.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("egress-pool");

/** A GET of allowed.test/hello with the secret's placeholder in its Authorization header; prints the status. */
const WITH_TOKEN = `
import os, urllib.request
req = urllib.request.Request("https://allowed.test/hello", headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
print(urllib.request.urlopen(req, timeout=8).status)
`;

/** What one session's network options saw. */
interface Seen {
  audit: ConnectionAudit[];
  asked: Omit<NetworkApprovalRequest, "signal">[];
}

describeEngine("network egress: sessions with network from the warm pool", () => {
  let bed: EgressTestbed;
  let backend: SandboxBackend;
  const sandboxes: Sandbox[] = [];
  const seen = { first: { audit: [], asked: [] } as Seen, pooled: { audit: [], asked: [] } as Seen };

  /** The session's network: the same rules and secret binding (one pool key), its own callbacks and value. */
  const networkOf = (who: Seen, token: string): NetworkOptions => ({
    mode: "allowlist",
    rules: [
      { host: "allowed.test", ports: [443], decision: "allow" },
      { host: "ask.test", ports: [443], decision: "ask" },
    ],
    egressNetworks: [bed.publicNetwork],
    caBundlePath: bed.caBundlePath,
    onConnection: (r) => who.audit.push(r),
    approve: async ({ signal: _signal, ...request }) => {
      who.asked.push(request);
      return "allow-once";
    },
    secrets: [{ name: "GITHUB_TOKEN", bindings: [{ hosts: ["allowed.test"] }], value: () => token }],
  });
  const net = async (sandbox: Sandbox, ...args: string[]) =>
    (await run(sandbox, { argv: ["python3", "/tmp/net.py", ...args] })).stdout.trim();

  beforeAll(async () => {
    bed = await startEgressTestbed();
    backend = dockerBackend(
      { kind: "docker" },
      { warmPool: { size: 1, maxIdleMs: 600_000, ttlMs: 3_600_000, networked: 1 } },
    );
  }, 120_000);

  afterAll(async () => {
    for (const sandbox of sandboxes) await sandbox.destroy();
    await backend?.close();
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
    const docker = getDocker();
    const tenantLabel = `${LABEL.tenant}=${tenant}`;
    expect(await docker.listNetworks({ filters: { label: [ROLE_LABEL, tenantLabel] } })).toEqual([]);
  });

  it("hands a spare over with its gateway bound to the claimer: its approver, audit and secret value", async () => {
    const first = await backend.claim(
      { ttlMs: 300_000, network: networkOf(seen.first, "value-of-first") },
      { tenant, sessionId: "egress-pool-first" },
    );
    sandboxes.push(first.sandbox);
    await expect.poll(() => backend.poolStats().idle, { timeout: 60_000 }).toBe(1);
    const pooled = await backend.claim(
      { ttlMs: 300_000, network: networkOf(seen.pooled, "value-of-pooled") },
      { tenant, sessionId: "egress-pool-second" },
    );
    sandboxes.push(pooled.sandbox);
    expect([first.pooled, pooled.pooled]).toEqual([false, true]);
    const sandbox = pooled.sandbox;
    expect(sandbox.info.sessionId).toBe("egress-pool-second");
    await sandbox.writeFile("/tmp/net.py", Buffer.from(NET_CLIENT));

    // The secret: the claimer's value reaches the bound host.
    const withToken = await run(sandbox, { argv: ["python3", "-c", WITH_TOKEN] });
    expect(withToken.stdout.trim()).toBe("200");
    const headers = (await bed.hostLog("public", "headers"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as [string, Array<[string, string]>])
      .filter(([path]) => path === "/hello")
      .map(([, h]) => Object.fromEntries(h.map(([k, v]) => [k.toLowerCase(), v])).authorization);
    expect(headers).toEqual(["Bearer value-of-pooled"]);

    // The ask: the claimer's approver, with the claimer's session id.
    expect(await net(sandbox, "get", "https://ask.test/hello")).toBe("OK 200 hello from public as ask.test");
    expect(seen.pooled.asked).toEqual([
      { sessionId: "egress-pool-second", host: "ask.test", port: 443, rule: "ask ask.test:443" },
    ]);

    // The records: the claimer's audit, its session id; nothing reached the first session's.
    await expect
      .poll(() => seen.pooled.audit.filter((r) => r.method === "CONNECT").map((r) => [r.sessionId, r.domain]))
      .toEqual([
        ["egress-pool-second", "allowed.test"],
        ["egress-pool-second", "ask.test"],
      ]);
    expect([seen.first.audit, seen.first.asked]).toEqual([[], []]);
  });

  it("labels a claimed spare's gateway like its sandbox (the spare's pool id), for adoption after a restart", async () => {
    const docker = getDocker();
    const pooled = sandboxes[1] as Sandbox;
    const info = await docker.getContainer(pooled.info.containerId).inspect();
    const sandboxLabel = info.Config.Labels[LABEL.session] ?? "";
    expect(sandboxLabel).toMatch(/^pool-/);
    const gateways = await docker.listContainers({
      filters: { label: [`${ROLE_LABEL}=gateway`, `${SESSION_LABEL}=${sandboxLabel}`] },
    });
    const network = pooled.info.network;
    expect(gateways.map((g) => g.Id)).toEqual([
      network?.mode === "allowlist" ? network.gatewayContainerId : "",
    ]);
  });
});
