/**
 * Egress section (issue 16): a 100 MiB HTTPS download and HTTPS connection setup through a
 * session's egress gateway, against the same from a plain container on the test host's network
 * without warden, measured in the same run with the same Python client. Test hosts as in
 * test/engine/egress/testbed.ts (no internet). Sizes: WARDEN_BENCH_EGRESS_MIB (default 100);
 * WARDEN_BENCH_EGRESS_CONNECTS (default 50) connections, each a new TLS connection for /hello.
 */
import type Docker from "dockerode";
import { DEFAULT_IMAGE, getDocker } from "../../src/sandbox/index.js";
import { createSession } from "../../src/session/index.js";
import { startEgressTestbed } from "../../test/engine/egress/testbed.js";
import { type BenchRow, type BenchSection, percentile } from "../harness.js";

const MIB = Number(process.env.WARDEN_BENCH_EGRESS_MIB ?? 100);
const CONNECTS = Number(process.env.WARDEN_BENCH_EGRESS_CONNECTS ?? 50);
const DIRECT = "direct, no warden";

/** Prints {"downloadMs", "bytes", "setupMs": [...]}; urllib honours the proxy variables when set. */
const CLIENT = `
import json, os, ssl, sys, time, urllib.request
open("/tmp/ca.pem", "w").write(os.environ["CA_PEM"])
ctx = ssl.create_default_context(cafile="/tmp/ca.pem")
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
t0 = time.perf_counter(); n = 0
with opener.open("https://allowed.test/bytes/%d" % (int(sys.argv[1]) * 1048576), timeout=120) as r:
    while True:
        b = r.read(1 << 20)
        if not b: break
        n += len(b)
download = (time.perf_counter() - t0) * 1000
setup = []
for i in range(int(sys.argv[2])):
    t = time.perf_counter()
    with opener.open("https://allowed.test/hello", timeout=30) as r: r.read()
    setup.append((time.perf_counter() - t) * 1000)
print(json.dumps({"downloadMs": download, "bytes": n, "setupMs": setup}))
`;

interface ClientResult {
  downloadMs: number;
  bytes: number;
  setupMs: number[];
}

/** Runs the client in a plain container on `network` (no proxy) and parses its line. */
async function direct(docker: Docker, network: string, ca: string): Promise<ClientResult> {
  const c = await docker.createContainer({
    Image: DEFAULT_IMAGE,
    Cmd: ["python3", "-c", CLIENT, String(MIB), String(CONNECTS)],
    Env: [`CA_PEM=${ca}`],
    Labels: { "io.warden.test": "egress" },
    HostConfig: { NetworkMode: network },
  });
  try {
    await c.start();
    await c.wait();
    const logs = (await c.logs({ stdout: true, stderr: true })).toString("utf8");
    const line = logs.split("\n").find((l) => l.includes("downloadMs"));
    if (!line) throw new Error(`direct client failed: ${logs.slice(-500)}`);
    return JSON.parse(line.slice(line.indexOf("{"))) as ClientResult;
  } finally {
    await c.remove({ force: true }).catch(() => {});
  }
}

export const egressSection: BenchSection = {
  name: "egress",
  description: `${MIB} MiB HTTPS download and ${CONNECTS} HTTPS connection setups through the egress gateway vs direct`,
  async run(): Promise<BenchRow[]> {
    const docker = getDocker();
    const bed = await startEgressTestbed();
    try {
      const { readFile } = await import("node:fs/promises");
      const ca = await readFile(bed.caBundlePath, "utf8");
      const session = await createSession({
        tenant: "bench-egress",
        network: {
          mode: "allowlist",
          rules: [{ host: "allowed.test", ports: [443], decision: "allow" }],
          egressNetworks: [bed.publicNetwork],
        },
      });
      let viaGateway: ClientResult;
      try {
        const out: Buffer[] = [];
        await session.sandbox.writeFile("/tmp/client.py", Buffer.from(CLIENT));
        const r = await session.sandbox.exec(
          { argv: ["python3", "/tmp/client.py", String(MIB), String(CONNECTS)] },
          { env: { CA_PEM: ca }, timeoutMs: 300_000, onStdout: (c) => out.push(Buffer.from(c)) },
        );
        const text = Buffer.concat(out).toString("utf8");
        if (r.exitCode !== 0) throw new Error(`client through the gateway failed (${r.exitCode}): ${text}`);
        viaGateway = JSON.parse(text) as ClientResult;
      } finally {
        await session.close();
      }
      const base = await direct(docker, bed.publicNetwork, ca);
      const mibps = (r: ClientResult) => r.bytes / (1024 * 1024) / (r.downloadMs / 1000);
      return [
        {
          name: `download ${MIB} MiB`,
          value: viaGateway.downloadMs,
          unit: "ms",
          baseline: base.downloadMs,
          baselineName: DIRECT,
        },
        {
          name: "download throughput (MiB/s)",
          value: mibps(viaGateway),
          unit: "ops/s",
          baseline: mibps(base),
          baselineName: DIRECT,
        },
        {
          name: "connection setup p50",
          value: percentile(viaGateway.setupMs, 50),
          unit: "ms",
          baseline: percentile(base.setupMs, 50),
          baselineName: DIRECT,
        },
        {
          name: "connection setup p99",
          value: percentile(viaGateway.setupMs, 99),
          unit: "ms",
          baseline: percentile(base.setupMs, 99),
          baselineName: DIRECT,
        },
      ];
    } finally {
      await bed.dispose();
    }
  },
};
