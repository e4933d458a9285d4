/**
 * Egress section (issue 16): a 100 MiB HTTPS download and new HTTPS connections through a session's
 * egress gateway, against the same without warden, like for like in the same run: the same Python
 * client file, run by an exec in an already running container of the same image with the same
 * limits and hardening (copied from the session's sandbox container), once in the warden sandbox
 * (proxy variables → gateway, which opens the TLS with the session CA and makes its own to the
 * test host, verified against the test CA) and once in a plain container on the test host's network
 * (straight to the test host). Rounds alternate (baseline, gateway, baseline, …) so that a change
 * of the machine's load hits both sides; the download is the median of the rounds, connection
 * setup percentiles are over every round's connections. The 1-minute load average before and
 * after is printed with the figures. Test hosts as in test/engine/egress/testbed.ts (no internet).
 * Sizes: WARDEN_BENCH_EGRESS_MIB (default 100), WARDEN_BENCH_EGRESS_CONNECTS (default 50 per round),
 * WARDEN_BENCH_EGRESS_ROUNDS (default 3). Then the cost of a secret's placeholder per request
 * (egress-secrets.ts).
 */
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import type Docker from "dockerode";
import { CA_BUNDLE_PATH } from "../../src/egress/index.js";
import { DEFAULT_IMAGE, getDocker } from "../../src/sandbox/index.js";
import { createSession, type Session } from "../../src/session/index.js";
import { startEgressTestbed } from "../../test/engine/egress/testbed.js";
import { type BenchRow, type BenchSection, percentile } from "../harness.js";
import { secretRows, testHostNetwork } from "./egress-secrets.js";

const MIB = Number(process.env.WARDEN_BENCH_EGRESS_MIB ?? 100);
const CONNECTS = Number(process.env.WARDEN_BENCH_EGRESS_CONNECTS ?? 50);
const ROUNDS = Number(process.env.WARDEN_BENCH_EGRESS_ROUNDS ?? 3);
const DIRECT = "same client, same limits, no warden";
const CLIENT_PATH = "/tmp/egress-client.py";

/**
 * Prints {"downloadMs", "bytes", "setupMs": [...]}: the download of N MiB read in 1 MiB chunks, then
 * M requests for /hello, each on a new TLS connection. urllib honours the proxy variables when set.
 */
const CLIENT = `
import json, os, ssl, sys, time, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[3])
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

/** Runs the client with `caPath` through `run` (argv → stdout) and parses its line. */
async function runClient(run: (argv: string[]) => Promise<string>, caPath: string): Promise<ClientResult> {
  const out = await run(["python3", CLIENT_PATH, String(MIB), String(CONNECTS), caPath]);
  const line = out.split("\n").find((l) => l.includes("downloadMs"));
  if (!line) throw new Error(`the client failed: ${out.slice(-500)}`);
  return JSON.parse(line) as ClientResult;
}

/** The sandbox's run: argv through the session's sandbox (its proxy variables set). */
function sandboxRun(session: Session) {
  return async (argv: string[]): Promise<string> => {
    const out: Buffer[] = [];
    const r = await session.sandbox.exec(
      { argv },
      { timeoutMs: 300_000, onStdout: (c) => out.push(Buffer.from(c)) },
    );
    const text = Buffer.concat(out).toString("utf8");
    if (r.exitCode !== 0) throw new Error(`client through the gateway failed (${r.exitCode}): ${text}`);
    return text;
  };
}

/**
 * A running plain container of the sandbox's image on `network`, with the sandbox container's
 * user, limits and hardening, holding the client and the CA at the same paths; its run is docker exec.
 */
async function baselineContainer(
  docker: Docker,
  sandboxId: string,
  network: string,
  files: { ca: string; caPath: string },
) {
  const sandbox = await docker.getContainer(sandboxId).inspect();
  const h = sandbox.HostConfig;
  const c = await docker.createContainer({
    Image: sandbox.Config.Image || DEFAULT_IMAGE,
    User: sandbox.Config.User,
    Entrypoint: ["sleep", "infinity"],
    Labels: { "io.warden.test": "egress" },
    HostConfig: {
      NetworkMode: network,
      NanoCpus: h.NanoCpus,
      CpuQuota: h.CpuQuota,
      CpuPeriod: h.CpuPeriod,
      Memory: h.Memory,
      MemorySwap: h.MemorySwap,
      PidsLimit: h.PidsLimit,
      ReadonlyRootfs: h.ReadonlyRootfs,
      Tmpfs: h.Tmpfs,
      CapDrop: h.CapDrop,
      SecurityOpt: h.SecurityOpt,
      ...(h.Runtime ? { Runtime: h.Runtime } : {}),
    },
  });
  await c.start();
  const exec = async (argv: string[], stdin?: string): Promise<string> => {
    const e = await c.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, AttachStdin: !!stdin });
    const stream = await e.start({ hijack: true, stdin: !!stdin });
    const chunks: Buffer[] = [];
    docker.modem.demuxStream(
      stream,
      { write: (b: Buffer) => chunks.push(b) } as never,
      {
        write: (b: Buffer) => chunks.push(b),
      } as never,
    );
    if (stdin) stream.end(stdin);
    await new Promise((r) => stream.on("end", r));
    return Buffer.concat(chunks).toString("utf8");
  };
  await exec(["sh", "-c", `cat > ${CLIENT_PATH}`], CLIENT);
  await exec(["sh", "-c", `cat > ${files.caPath}`], files.ca);
  return { run: (argv: string[]) => exec(argv), remove: () => c.remove({ force: true }) };
}

export const egressSection: BenchSection = {
  name: "egress",
  description: `${MIB} MiB HTTPS download and ${CONNECTS}×${ROUNDS} new HTTPS connections through the egress gateway vs the same client, image and limits straight to the test host, alternating rounds`,
  async run(): Promise<BenchRow[]> {
    const loadBefore = loadavg()[0] ?? Number.NaN;
    const docker = getDocker();
    const bed = await startEgressTestbed();
    const caPath = "/tmp/egress-ca.pem";
    let session: Session | undefined;
    let baseline: Awaited<ReturnType<typeof baselineContainer>> | undefined;
    try {
      const ca = await readFile(bed.caBundlePath, "utf8");
      session = await createSession({
        tenant: "bench-egress",
        sandbox: { network: testHostNetwork(bed) },
      });
      await session.sandbox.writeFile(CLIENT_PATH, Buffer.from(CLIENT));
      await session.sandbox.writeFile(caPath, Buffer.from(ca));
      baseline = await baselineContainer(docker, session.sandbox.info.containerId, bed.publicNetwork, {
        ca,
        caPath,
      });
      const viaGateway: ClientResult[] = [];
      const direct: ClientResult[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        direct.push(await runClient(baseline.run, caPath));
        viaGateway.push(await runClient(sandboxRun(session), CA_BUNDLE_PATH));
      }
      const loadAfter = loadavg()[0] ?? Number.NaN;
      const rows = rowsOf(viaGateway, direct, { loadBefore, loadAfter });
      return [...rows.slice(0, -2), ...(await secretRows(bed)), ...rows.slice(-2)];
    } finally {
      await baseline?.remove().catch(() => {});
      await session?.close();
      await bed.dispose();
    }
  },
};

/** The section's rows from both sides' rounds. */
function rowsOf(
  viaGateway: ClientResult[],
  direct: ClientResult[],
  load: { loadBefore: number; loadAfter: number },
): BenchRow[] {
  const median = (xs: number[]) => percentile(xs, 50);
  const downloadMs = (rs: ClientResult[]) => median(rs.map((r) => r.downloadMs));
  const mibps = (rs: ClientResult[]) =>
    median(rs.map((r) => r.bytes / (1024 * 1024) / (r.downloadMs / 1000)));
  const setups = (rs: ClientResult[]) => rs.flatMap((r) => r.setupMs);
  const against = { baselineName: DIRECT };
  return [
    {
      name: `download ${MIB} MiB (median)`,
      value: downloadMs(viaGateway),
      unit: "ms",
      baseline: downloadMs(direct),
      ...against,
    },
    {
      name: "download throughput MiB/s (median)",
      value: mibps(viaGateway),
      unit: "ops/s",
      baseline: mibps(direct),
      ...against,
    },
    {
      name: "new TLS connection + GET p50",
      value: percentile(setups(viaGateway), 50),
      unit: "ms",
      baseline: percentile(setups(direct), 50),
      ...against,
    },
    {
      name: "new TLS connection + GET p99",
      value: percentile(setups(viaGateway), 99),
      unit: "ms",
      baseline: percentile(setups(direct), 99),
      ...against,
    },
    { name: "load average 1 min, before", value: load.loadBefore, unit: "count" },
    { name: "load average 1 min, after", value: load.loadAfter, unit: "count" },
  ];
}
