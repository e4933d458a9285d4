/**
 * The egress section's transfer phase (issue 16, issue 40's first two targets): a download of N MiB
 * over HTTPS (through an opened and checked tunnel: the gateway opens the TLS with the session CA
 * and makes its own to the test host, verified against the test CA) and over plain HTTP (the
 * proxy's absolute-URL form), then M new TLS connections with one GET each. The same Python client
 * file runs on both sides (egress-direct.ts); rounds alternate (direct, gateway, direct, …) so a
 * change of the machine's load hits both; downloads are the median of the rounds, connection setup
 * percentiles are over every round's connections.
 */
import { CA_BUNDLE_PATH } from "../../src/egress/index.js";
import { type BenchRow, p99Name, percentile } from "../harness.js";
import { runOk, type Side } from "./egress-direct.js";

const CLIENT_PATH = "/tmp/egress-client.py";
/** Where the direct side keeps the test CA (the sandbox trusts the session CA at CA_BUNDLE_PATH). */
export const DIRECT_CA_PATH = "/tmp/egress-ca.pem";

/** Sizes of the phase: MiB per download, new connections per round, rounds. */
export interface TransferSizes {
  mib: number;
  connects: number;
  rounds: number;
}

/**
 * Prints {"https": {"ms", "bytes"}, "http": {…}, "setupMs": [...]}: the HTTPS download of N MiB read
 * in 1 MiB chunks, the same over plain HTTP, then M requests for /hello, each on a new TLS
 * connection. urllib honours the proxy variables when set.
 */
const CLIENT = `
import json, ssl, sys, time, urllib.request
mib, connects, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
def download(url):
    t0 = time.perf_counter(); n = 0
    with opener.open(url, timeout=120) as r:
        while True:
            b = r.read(1 << 20)
            if not b: break
            n += len(b)
    return {"ms": (time.perf_counter() - t0) * 1000, "bytes": n}
out = {"https": download("https://allowed.test/bytes/%d" % (mib << 20)),
       "http": download("http://allowed.test/bytes/%d" % (mib << 20)), "setupMs": []}
for i in range(connects):
    t = time.perf_counter()
    with opener.open("https://allowed.test/hello", timeout=30) as r: r.read()
    out["setupMs"].append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
`;

interface Download {
  ms: number;
  bytes: number;
}

interface ClientResult {
  https: Download;
  http: Download;
  setupMs: number[];
}

async function runClient(side: Side, caPath: string, sizes: TransferSizes): Promise<ClientResult> {
  const argv = ["python3", CLIENT_PATH, String(sizes.mib), String(sizes.connects), caPath];
  const out = await runOk(side, argv, "the transfer client");
  const line = out.split("\n").find((l) => l.startsWith("{"));
  if (!line) throw new Error(`the transfer client printed no result: ${out.slice(-500)}`);
  const result = JSON.parse(line) as ClientResult;
  for (const d of [result.https, result.http])
    if (d.bytes !== sizes.mib << 20)
      throw new Error(`a download got ${d.bytes} bytes of ${sizes.mib << 20}: ${out.slice(-500)}`);
  return result;
}

/**
 * The phase's rows. `gateway` runs in a session whose rules allow allowed.test on 443 and 80;
 * `direct` is on the test host's network and holds the test CA at DIRECT_CA_PATH.
 */
export async function transferRows(
  gateway: Side,
  direct: Side,
  sizes: TransferSizes,
  baselineName: string,
): Promise<BenchRow[]> {
  await gateway.writeFile(CLIENT_PATH, CLIENT);
  await direct.writeFile(CLIENT_PATH, CLIENT);
  const viaGateway: ClientResult[] = [];
  const straight: ClientResult[] = [];
  for (let round = 0; round < sizes.rounds; round++) {
    straight.push(await runClient(direct, DIRECT_CA_PATH, sizes));
    viaGateway.push(await runClient(gateway, CA_BUNDLE_PATH, sizes));
  }
  const median = (xs: number[]) => percentile(xs, 50);
  const ms = (rs: ClientResult[], k: "https" | "http") => median(rs.map((r) => r[k].ms));
  const mibps = (rs: ClientResult[], k: "https" | "http") =>
    median(rs.map((r) => r[k].bytes / (1024 * 1024) / (r[k].ms / 1000)));
  const setups = (rs: ClientResult[]) => rs.flatMap((r) => r.setupMs);
  const against = { baselineName };
  const n = setups(viaGateway).length;
  const rows: BenchRow[] = [];
  for (const [k, label] of [
    ["https", "HTTPS"],
    ["http", "plain HTTP"],
  ] as const) {
    rows.push(
      {
        name: `${label} download ${sizes.mib} MiB (median)`,
        value: ms(viaGateway, k),
        unit: "ms",
        baseline: ms(straight, k),
        ...against,
      },
      {
        name: `${label} download throughput MiB/s (median)`,
        value: mibps(viaGateway, k),
        unit: "ops/s",
        baseline: mibps(straight, k),
        ...against,
      },
    );
  }
  rows.push(
    {
      name: "new TLS connection + GET p50",
      value: percentile(setups(viaGateway), 50),
      unit: "ms",
      baseline: percentile(setups(straight), 50),
      ...against,
    },
    {
      name: "new TLS connection + GET p50 added (difference)",
      value: percentile(setups(viaGateway), 50) - percentile(setups(straight), 50),
      unit: "ms",
    },
    {
      name: p99Name("new TLS connection + GET", n),
      value: percentile(setups(viaGateway), 99),
      unit: "ms",
      baseline: percentile(setups(straight), 99),
      ...against,
    },
  );
  return rows;
}
