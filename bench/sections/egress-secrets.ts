/**
 * The egress section's secrets phase (issue 39): what replacing a placeholder costs per request.
 * One session with a secret bound to the test host; one kept-alive HTTPS connection through the
 * gateway (a CONNECT tunnel it opens), alternating a request whose Authorization header holds the
 * placeholder (held by the gateway, decided by the controller, replaced) with the same request
 * holding a plain token (checked in the gateway, never sent to the controller). The row's value is
 * the placeholder request's p50, its baseline the plain one's, in the same run and connection.
 * Requests: WARDEN_BENCH_EGRESS_SECRET_REQUESTS (default 200 of each).
 */
import { CA_BUNDLE_PATH } from "../../src/egress/index.js";
import { createSession } from "../../src/session/index.js";
import type { EgressTestbed } from "../../test/engine/egress/testbed.js";
import { type BenchRow, percentile } from "../harness.js";

const REQUESTS = Number(process.env.WARDEN_BENCH_EGRESS_SECRET_REQUESTS ?? 200);
const CLIENT_PATH = "/tmp/secret-client.py";

/** Prints {"placeholder": [ms…], "plain": [ms…]} over one kept-alive tunnel through the proxy. */
const CLIENT = `
import http.client, json, os, ssl, sys, time, urllib.parse
proxy = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
conn = http.client.HTTPSConnection(proxy.hostname, proxy.port, context=ssl.create_default_context(cafile=sys.argv[2]))
conn.set_tunnel("allowed.test", 443)
out = {"placeholder": [], "plain": []}
def get(header):
    t = time.perf_counter()
    conn.request("GET", "/hello", headers={"Authorization": header})
    r = conn.getresponse(); r.read()
    if r.status != 200: raise SystemExit("status %d" % r.status)
    return (time.perf_counter() - t) * 1000
get("Bearer warm-up")
for i in range(int(sys.argv[1])):
    out["placeholder"].append(get("Bearer " + os.environ["BENCH_TOKEN"]))
    out["plain"].append(get("Bearer plain-token-0123456789"))
print(json.dumps(out))
`;

/**
 * A session network that allows the test host `allowed.test` on `ports` (default 443): the gateway
 * verifies it against the test CA, the sandbox trusts the session CA. Shared with egress.ts.
 */
export function testHostNetwork(bed: EgressTestbed, ports: number[] = [443]) {
  return {
    mode: "allowlist" as const,
    rules: [{ host: "allowed.test", ports, decision: "allow" as const }],
    egressNetworks: [bed.publicNetwork],
    caBundlePath: bed.caBundlePath,
  };
}

/** The phase's rows, on `bed`'s test host. */
export async function secretRows(bed: EgressTestbed): Promise<BenchRow[]> {
  const session = await createSession({
    tenant: "bench-egress-secrets",
    sandbox: {
      network: {
        ...testHostNetwork(bed),
        secrets: [
          {
            name: "BENCH_TOKEN",
            bindings: [{ hosts: ["allowed.test"] }],
            value: () => "bench-value-0123456789",
          },
        ],
      },
    },
  });
  try {
    await session.sandbox.writeFile(CLIENT_PATH, Buffer.from(CLIENT));
    const out: Buffer[] = [];
    const r = await session.sandbox.exec(
      { argv: ["python3", CLIENT_PATH, String(REQUESTS), CA_BUNDLE_PATH] },
      { timeoutMs: 300_000, onStdout: (c) => out.push(Buffer.from(c)) },
    );
    const text = Buffer.concat(out).toString("utf8");
    if (r.exitCode !== 0) throw new Error(`the secrets client failed (${r.exitCode}): ${text.slice(-500)}`);
    const { placeholder, plain } = JSON.parse(text) as { placeholder: number[]; plain: number[] };
    const against = { baselineName: "same request, same tunnel, no placeholder" };
    const p50 = percentile(placeholder, 50) - percentile(plain, 50);
    return [
      {
        name: "request with a placeholder replaced p50",
        value: percentile(placeholder, 50),
        unit: "ms",
        baseline: percentile(plain, 50),
        ...against,
      },
      {
        name: "request with a placeholder replaced p99",
        value: percentile(placeholder, 99),
        unit: "ms",
        baseline: percentile(plain, 99),
        ...against,
      },
      { name: "placeholder replacement cost p50 (difference)", value: p50, unit: "ms" },
    ];
  } finally {
    await session.close();
  }
}
