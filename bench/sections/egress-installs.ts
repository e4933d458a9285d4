/**
 * The egress section's install phase (issue 40's fourth target): the image's own `pip install` of
 * `celery[redis]` (18 distributions) from the package test host's index, and `npm install` of a
 * project depending on express (68 packages) from its registry (egress-packages.ts), each through
 * the session's gateway and straight to the test host, alternating, every round from an empty
 * HOME (no pip or npm cache, nothing installed). Each install is timed inside its container
 * (`date +%s%N` around the command) and must install the same number of packages on both sides.
 */
import { type BenchRow, percentile } from "../harness.js";
import { runOk, type Side } from "./egress-direct.js";
import { NPM_HOST, NPM_PROJECT, PIP_COUNT, PIP_HOST, PIP_REQUIREMENT } from "./egress-packages.js";

/** Where the direct side keeps the package host's CA. */
const DIRECT_PKG_CA = "/tmp/bench-pkg-ca.pem";

/** Runs `command` (sh, HOME emptied first) and prints its log's tail and `BENCH-INSTALL <exit> <ms>`. */
function timed(clean: string, command: string): string {
  return [
    `cd "$HOME" && rm -rf ${clean} && mkdir -p app && cd app && printf '%s' "$0" > package.json || exit 1`,
    "s=$(date +%s%N)",
    `${command} > /tmp/bench-install.log 2>&1; rc=$?`,
    "e=$(date +%s%N)",
    "tail -n 20 /tmp/bench-install.log",
    'echo "BENCH-INSTALL $rc $(( (e - s) / 1000000 ))"',
  ].join("\n");
}

const PIP = timed(
  ".local .cache app",
  `pip install --no-cache-dir --disable-pip-version-check --no-color --progress-bar off --index-url https://${PIP_HOST}/simple/ '${PIP_REQUIREMENT}'`,
);
const NPM = timed(
  ".npm app",
  `npm install --no-audit --no-fund --no-update-notifier --registry https://${NPM_HOST}/npm/`,
);

/** One install's time (ms) and how many packages it installed; throws when it failed. */
async function install(side: Side, which: "pip" | "npm", env?: Record<string, string>) {
  const argv = ["sh", "-c", which === "pip" ? PIP : NPM, JSON.stringify(NPM_PROJECT)];
  const out = await runOk(side, argv, `${which} install`, env);
  const m = /BENCH-INSTALL (\d+) (\d+)/.exec(out);
  if (m?.[1] !== "0") throw new Error(`${which} install failed: ${out.slice(-1500)}`);
  const count =
    which === "pip"
      ? (/Successfully installed (.*)/.exec(out)?.[1]?.trim().split(/\s+/).length ?? 0)
      : Number(/added (\d+) packages?/.exec(out)?.[1] ?? 0);
  return { ms: Number(m[2]), count };
}

/**
 * The phase's rows. `gateway` runs in a session allowing the package host's names on 443;
 * `direct` is on the package host's network; `ca` is the package host's CA (PEM).
 */
export async function installRows(
  gateway: Side,
  direct: Side,
  ca: string,
  rounds: number,
  npmPackages: number,
  baselineName: string,
): Promise<BenchRow[]> {
  await direct.writeFile(DIRECT_PKG_CA, ca);
  const directEnv = Object.fromEntries(
    ["PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"].map((k) => [k, DIRECT_PKG_CA]),
  );
  const rows: BenchRow[] = [];
  for (const [which, expected, label] of [
    ["pip", PIP_COUNT, `pip install ${PIP_REQUIREMENT} (${PIP_COUNT} distributions)`],
    ["npm", npmPackages, `npm install express 5.3.0 project (${npmPackages} packages)`],
  ] as const) {
    const viaGateway: number[] = [];
    const straight: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [side, env, into] of [
        [direct, directEnv, straight],
        [gateway, undefined, viaGateway],
      ] as const) {
        const r = await install(side, which, env);
        if (r.count !== expected)
          throw new Error(`${which} install installed ${r.count} packages, expected ${expected}`);
        into.push(r.ms);
      }
    }
    rows.push({
      name: `${label} (median of ${rounds})`,
      value: percentile(viaGateway, 50),
      unit: "ms",
      baseline: percentile(straight, 50),
      baselineName,
    });
  }
  return rows;
}
