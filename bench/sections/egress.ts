/**
 * Egress section (issues 16, 39, 40): the session's egress gateway against the same work without
 * warden, like for like in the same run. "Direct" is the same command run by docker exec in a
 * plain running container of the sandbox's image with the sandbox container's user, environment,
 * limits and hardening, on the test hosts' network (egress-direct.ts). Test hosts as in
 * test/engine/egress/testbed.ts plus a package test host (egress-packages.ts); no internet.
 * Phases, in order (WARDEN_BENCH_EGRESS_PHASES, a comma list, default all of them):
 * - `transfer` (egress-transfer.ts): an N MiB download over HTTPS (opened and checked tunnel) and
 *   over plain HTTP, and M new TLS connections + GET per round, alternating rounds.
 *   WARDEN_BENCH_EGRESS_MIB (default 100), WARDEN_BENCH_EGRESS_CONNECTS (default 50 per round),
 *   WARDEN_BENCH_EGRESS_ROUNDS (default 3).
 * - `secrets` (egress-secrets.ts): a secret placeholder's cost per request.
 *   WARDEN_BENCH_EGRESS_SECRET_REQUESTS (default 200 of each).
 * - `start` (egress-start.ts): session start with network against without, cold and from a warm
 *   pool. WARDEN_BENCH_EGRESS_STARTS (default 10 of each kind).
 * - `install` (egress-installs.ts): pip install of celery[redis] (18 distributions) and npm install
 *   of an express project (68 packages) from the package test host. The packages are fetched once
 *   by the host into WARDEN_BENCH_CACHE (default ~/.cache/warden-bench) and reused.
 *   WARDEN_BENCH_EGRESS_INSTALL_ROUNDS (default 5).
 * - `scale` (egress-scale.ts): K sessions with network at once, against K without: start time,
 *   gateway memory per session (mean, max), host memory, controller RSS.
 *   WARDEN_BENCH_EGRESS_SESSIONS (default 100; capped by the engine's free address pools less
 *   WARDEN_BENCH_EGRESS_NETWORK_RESERVE, default 8, and by the 252 gateways the test hosts'
 *   network, a /24 at most, holds), WARDEN_BENCH_EGRESS_CONCURRENCY (default 4).
 * WARDEN_BENCH_GATEWAY_IMAGE runs the gateways from another image (egress-gateway-image.ts). The
 * 1-minute load average before the section and after each phase is printed with the figures. The
 * defaults take about 2-3 minutes on the 2-core test machine. A phase that fails leaves a
 * `<phase>: failed` row and the next phase runs; the section then prints its rows and fails. Every
 * container and network the section starts is removed when it ends, failed or not.
 */
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { CA_BUNDLE_PATH } from "../../src/egress/index.js";
import { getDocker, type SandboxSpec } from "../../src/sandbox/index.js";
import { createSession, type Session } from "../../src/session/index.js";
import { type EgressTestbed, startEgressTestbed } from "../../test/engine/egress/testbed.js";
import { type BenchRow, type BenchSection, formatRows } from "../harness.js";
import { directSide, type Side, sandboxSide } from "./egress-direct.js";
import { useGatewayImage } from "./egress-gateway-image.js";
import { installRows } from "./egress-installs.js";
import { cacheDir, ensurePackages, NPM_HOST, PIP_HOST, startPackageHost } from "./egress-packages.js";
import { scaleRows } from "./egress-scale.js";
import { secretRows, testHostNetwork } from "./egress-secrets.js";
import { startRows } from "./egress-start.js";
import { DIRECT_CA_PATH, transferRows } from "./egress-transfer.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const TRANSFER = {
  mib: env("WARDEN_BENCH_EGRESS_MIB", 100),
  connects: env("WARDEN_BENCH_EGRESS_CONNECTS", 50),
  rounds: env("WARDEN_BENCH_EGRESS_ROUNDS", 3),
};
const STARTS = env("WARDEN_BENCH_EGRESS_STARTS", 10);
const INSTALL_ROUNDS = env("WARDEN_BENCH_EGRESS_INSTALL_ROUNDS", 5);
const SCALE = {
  sessions: env("WARDEN_BENCH_EGRESS_SESSIONS", 100),
  concurrency: env("WARDEN_BENCH_EGRESS_CONCURRENCY", 4),
  reserve: env("WARDEN_BENCH_EGRESS_NETWORK_RESERVE", 8),
};
const PHASES = ["transfer", "secrets", "start", "install", "scale"] as const;
type Phase = (typeof PHASES)[number];
const DIRECT = "same client, same limits, no warden";
const TENANT = "bench-egress";

/** The phases asked for; throws naming the known ones for an unknown name. */
function phases(): Phase[] {
  const asked = (process.env.WARDEN_BENCH_EGRESS_PHASES ?? PHASES.join(",")).split(",").map((p) => p.trim());
  const unknown = asked.filter((p) => !(PHASES as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(
      `WARDEN_BENCH_EGRESS_PHASES: unknown ${unknown.join(", ")}; phases: ${PHASES.join(", ")}`,
    );
  return PHASES.filter((p) => asked.includes(p));
}

/** Runs `fn` with a session of `sandbox` and a direct container on `directNetwork`; removes both. */
async function withSides<T>(
  sandbox: SandboxSpec,
  directNetwork: string,
  fn: (gateway: Side, direct: Side) => Promise<T>,
): Promise<T> {
  let session: Session | undefined;
  let direct: Awaited<ReturnType<typeof directSide>> | undefined;
  try {
    session = await createSession({ tenant: TENANT, sandbox });
    direct = await directSide(getDocker(), session.sandbox.info.containerId, directNetwork);
    return await fn(sandboxSide(session), direct);
  } finally {
    await direct?.remove();
    await session?.close();
  }
}

async function phaseRows(phase: Phase, bed: EgressTestbed, ca: string): Promise<BenchRow[]> {
  const docker = getDocker();
  switch (phase) {
    case "transfer":
      return withSides(
        { network: testHostNetwork(bed, [443, 80]) },
        bed.publicNetwork,
        async (gw, direct) => {
          await direct.writeFile(DIRECT_CA_PATH, ca);
          return transferRows(gw, direct, TRANSFER, DIRECT);
        },
      );
    case "secrets":
      return secretRows(bed);
    case "start":
      return startRows(TENANT, testHostNetwork(bed), STARTS);
    case "install": {
      const dir = cacheDir();
      const { npmPackages } = await ensurePackages(dir);
      const host = await startPackageHost(docker, bed.publicNetwork, dir);
      try {
        const network = {
          mode: "allowlist" as const,
          rules: [PIP_HOST, NPM_HOST].map((host) => ({ host, ports: [443], decision: "allow" as const })),
          egressNetworks: [bed.publicNetwork],
          caBundlePath: host.caPath,
        };
        return await withSides({ network }, bed.publicNetwork, (gw, direct) =>
          installRows(gw, direct, host.ca, INSTALL_ROUNDS, npmPackages, DIRECT),
        );
      } finally {
        await host.dispose();
      }
    }
    case "scale": {
      const get = `import ssl, urllib.request; urllib.request.urlopen("https://allowed.test/hello", context=ssl.create_default_context(cafile="${CA_BUNDLE_PATH}"), timeout=30).read()`;
      return scaleRows(docker, testHostNetwork(bed), ["python3", "-c", get], SCALE);
    }
  }
}

export const egressSection: BenchSection = {
  name: "egress",
  description:
    "egress gateway vs the same work without warden (image, limits, test hosts), alternating: downloads, TLS connects, secrets, session start, pip/npm installs, scale",
  async run(): Promise<BenchRow[]> {
    const wanted = phases();
    const docker = getDocker();
    const image = await useGatewayImage(docker, process.env.WARDEN_BENCH_GATEWAY_IMAGE);
    console.log(`gateway image: ${image.name} (${image.id.slice(0, 19)}); phases: ${wanted.join(", ")}`);
    const rows: BenchRow[] = [
      { name: "load average 1 min, before", value: loadavg()[0] ?? Number.NaN, unit: "count" },
    ];
    // Every gateway of the scale phase takes an address on the test hosts' network, and the
    // install phase's package host and direct container one each.
    const bed = await startEgressTestbed(
      wanted.includes("scale") ? { publicRoom: Math.min(252, Math.max(20, SCALE.sessions + 2)) } : {},
    );
    try {
      const ca = await readFile(bed.caBundlePath, "utf8");
      const failed: string[] = [];
      for (const phase of wanted) {
        const t0 = Date.now();
        try {
          rows.push(...(await phaseRows(phase, bed, ca)).map((r) => ({ ...r, name: `${phase}: ${r.name}` })));
        } catch (err) {
          // The other phases still run; the section fails at the end, after printing what it measured.
          const message = err instanceof Error ? err.message : String(err);
          failed.push(`${phase}: ${message}`);
          rows.push({
            name: `${phase}: failed`,
            value: Number.NaN,
            unit: "count",
            note: message.slice(0, 300),
          });
        }
        rows.push({
          name: `load average 1 min, after ${phase} (${Math.round((Date.now() - t0) / 1000)} s)`,
          value: loadavg()[0] ?? Number.NaN,
          unit: "count",
        });
      }
      if (failed.length > 0) {
        console.log(formatRows("egress", rows));
        throw new Error(failed.join("; "));
      }
      return rows;
    } finally {
      await bed.dispose();
      image.restore();
    }
  },
};
