/**
 * Real packages for the egress section's install phase, and a package test host that serves them
 * (no internet in the sandbox nor at the test host: only the host fetches, once).
 * - pip: `celery[redis]` 5.7.0 and its 17 dependencies for the image's Python 3.11.2 (redis needs
 *   async-timeout below 3.11.3), pinned below, every one a pure-Python wheel (py3-none-any: no
 *   build, no install hook), fetched by the host's `pip download` into <cache>/pip/.
 * - npm: a project depending on `express` 5.3.0: 68 packages (none with an install script, none
 *   scoped), resolved once by the host's `npm install --package-lock-only` against its registry
 *   (<cache>/npm/package-lock.json keeps that resolution), each package's registry document kept
 *   with just the locked versions (<cache>/npm/docs/) and their tarballs, checked against the
 *   lock's integrity (<cache>/npm/tarballs/).
 * The cache (WARDEN_BENCH_CACHE, default ~/.cache/warden-bench) is reused between runs. The test
 * host is a container on the testbed's public network named pypi-bench.test and npm-bench.test,
 * serving HTTPS (a CA made here) from the cache mounted read-only: a PEP 503 index at /simple/
 * (files at /files/, with their sha256) and an npm registry at /npm/ (documents whose tarball URLs
 * name the host the request came for).
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import type Docker from "dockerode";
import { DEFAULT_IMAGE } from "../../src/sandbox/index.js";
import { makeTestCertificates } from "../../test/engine/egress/testbed.js";

const run = promisify(execFile);

/** The pip install's requirement, and every distribution of its tree (pinned: the cache stays valid). */
export const PIP_REQUIREMENT = "celery[redis]==5.7.0";
const PIP_PINS = [
  "amqp==5.4.2",
  "async-timeout==5.0.1",
  "billiard==4.3.2",
  "celery==5.7.0",
  "click==8.5.1",
  "click-didyoumean==0.3.1",
  "click-plugins==1.1.1.2",
  "click-repl==0.4.1",
  "kombu==5.7.0",
  "packaging==26.3",
  "prompt-toolkit==3.0.53",
  "python-dateutil==2.9.0.post0",
  "redis==8.2.0",
  "six==1.17.0",
  "typing-extensions==4.16.0",
  "tzlocal==5.4.5",
  "vine==5.1.0",
  "wcwidth==0.9.5",
];
/** Distributions the pip install installs. */
export const PIP_COUNT = PIP_PINS.length;
/** The npm project's package.json. */
export const NPM_PROJECT = {
  name: "bench-app",
  version: "1.0.0",
  private: true,
  dependencies: { express: "5.3.0" },
};

/** The cache directory (created on demand). */
export function cacheDir(): string {
  return process.env.WARDEN_BENCH_CACHE ?? join(homedir(), ".cache", "warden-bench");
}

/** Fills the cache with what is missing; resolves the number of npm packages the project installs. */
export async function ensurePackages(dir: string): Promise<{ npmPackages: number }> {
  await ensureWheels(join(dir, "pip"));
  return { npmPackages: await ensureNpm(join(dir, "npm")) };
}

async function ensureWheels(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const have = (await readdir(dir)).filter((f) => f.endsWith(".whl")).length;
  if (have === PIP_PINS.length) return;
  const pure = ["--only-binary=:all:", "--platform", "any", "--python-version", "3.11"];
  const args = ["-m", "pip", "download", "--no-deps", "--no-cache-dir", "-d", dir, ...pure];
  // No find-links (local wheels): only the index.
  const { PIP_FIND_LINKS: _, ...env } = process.env;
  await run("python3", [...args, "--implementation", "py", "--abi", "none", ...PIP_PINS], {
    env,
    maxBuffer: 1 << 24,
  });
  const got = (await readdir(dir)).filter((f) => f.endsWith(".whl"));
  if (got.length !== PIP_PINS.length)
    throw new Error(`pip download left ${got.length} wheels in ${dir}, expected ${PIP_PINS.length}: ${got}`);
}

interface LockEntry {
  name: string;
  version: string;
  integrity: string;
}

/** The lock's packages (one per name@version). */
function lockEntries(lock: { packages: Record<string, Partial<LockEntry>> }): LockEntry[] {
  const seen = new Map<string, LockEntry>();
  for (const [key, p] of Object.entries(lock.packages)) {
    if (!key) continue;
    const name = p.name ?? key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    if (!p.version || !p.integrity) throw new Error(`lock entry ${key} lacks a version or an integrity`);
    seen.set(`${name}@${p.version}`, { name, version: p.version, integrity: p.integrity });
  }
  return [...seen.values()];
}

type Manifest = Record<string, unknown> & { dist: { tarball: string; integrity?: string; shasum?: string } };

async function ensureNpm(dir: string): Promise<number> {
  const lockPath = join(dir, "package-lock.json");
  if (!existsSync(lockPath)) {
    const work = await mkdtemp(join(tmpdir(), "warden-bench-npm-"));
    try {
      await writeFile(join(work, "package.json"), JSON.stringify(NPM_PROJECT));
      const flags = ["--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"];
      await run("npm", ["install", ...flags], { cwd: work, maxBuffer: 1 << 24 });
      await mkdir(dir, { recursive: true });
      await writeFile(lockPath, await readFile(join(work, "package-lock.json")));
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  const entries = lockEntries(JSON.parse(await readFile(lockPath, "utf8")));
  const docFile = (name: string) => join(dir, "docs", `${name.replace("/", "%2f")}.json`);
  const missing = entries.filter((e) => !existsSync(docFile(e.name)));
  if (missing.length === 0) return entries.length;
  // The registry's document of each name, kept with just the locked versions, and their tarballs.
  const registry = (process.env.npm_config_registry ?? "https://registry.npmjs.org/").replace(/\/?$/, "/");
  const byName = new Map<string, LockEntry[]>();
  for (const e of missing) byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  for (const [name, locked] of byName) {
    const full = (await (await fetchOk(`${registry}${name.replace("/", "%2f")}`)).json()) as {
      versions: Record<string, Manifest>;
    };
    const versions: Record<string, Manifest> = {};
    for (const e of locked) {
      const manifest = full.versions[e.version];
      if (!manifest) throw new Error(`the registry has no ${name}@${e.version}`);
      const { tarball, shasum } = manifest.dist;
      const data = Buffer.from(await (await fetchOk(tarball)).arrayBuffer());
      const [algo, want] = e.integrity.split("-", 2);
      if (
        createHash(algo ?? "sha512")
          .update(data)
          .digest("base64") !== want
      )
        throw new Error(`${tarball} does not match the lock's integrity ${e.integrity}`);
      await mkdir(join(dir, "tarballs", name), { recursive: true });
      await writeFile(join(dir, "tarballs", name, basename(new URL(tarball).pathname)), data);
      versions[e.version] = {
        ...manifest,
        dist: { tarball, integrity: e.integrity, ...(shasum ? { shasum } : {}) },
      };
    }
    const latest = Object.keys(versions)
      .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
      .at(-1);
    await mkdir(join(dir, "docs"), { recursive: true });
    await writeFile(docFile(name), JSON.stringify({ name, "dist-tags": { latest }, versions }));
  }
  return entries.length;
}

async function fetchOk(url: string): Promise<Response> {
  const r = await fetch(url, { headers: { accept: "application/json" } });
  if (!r.ok) throw new Error(`GET ${url}: ${r.status}`);
  return r;
}

/** Names the package test host answers to. */
export const PIP_HOST = "pypi-bench.test";
export const NPM_HOST = "npm-bench.test";

const SERVER = String.raw`
import hashlib, http.server, json, os, re, ssl, urllib.parse
ROOT = "/srv"
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
wheels = {}
for f in sorted(os.listdir(ROOT + "/pip")):
    if f.endswith(".whl"):
        digest = hashlib.sha256(open(ROOT + "/pip/" + f, "rb").read()).hexdigest()
        wheels.setdefault(norm(f.split("-")[0]), []).append((f, digest))
docs = {}
for f in os.listdir(ROOT + "/npm/docs"):
    docs[urllib.parse.unquote(f[:-5])] = json.load(open(ROOT + "/npm/docs/" + f))
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
    def send(self, status, body, ctype):
        self.send_response(status); self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def file(self, path):
        if not os.path.isfile(path): return self.send(404, b"not found\n", "text/plain")
        self.send(200, open(path, "rb").read(), "application/octet-stream")
    def do_GET(self):
        path = urllib.parse.unquote(self.path.split("?")[0]); host = self.headers.get("Host")
        m = re.fullmatch(r"/simple/([^/]+)/?", path)
        if m:
            files = wheels.get(norm(m.group(1)))
            if not files: return self.send(404, b"not found\n", "text/plain")
            links = "".join(f'<a href="/files/{f}#sha256={d}">{f}</a><br>\n' for f, d in files)
            return self.send(200, f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode(), "text/html")
        if path.startswith("/files/"): return self.file(ROOT + "/pip/" + os.path.basename(path))
        m = re.fullmatch(r"/npm/(@[^/]+/[^/]+|[^/@]+)/-/([^/]+\.tgz)", path)
        if m: return self.file(f"{ROOT}/npm/tarballs/{m.group(1)}/{m.group(2)}")
        m = re.fullmatch(r"/npm/(@[^/]+/[^/]+|[^/@]+)", path)
        if m and m.group(1) in docs:
            doc = json.loads(json.dumps(docs[m.group(1)]))
            for v in doc["versions"].values():
                file = os.path.basename(urllib.parse.urlparse(v["dist"]["tarball"]).path)
                v["dist"]["tarball"] = f"https://{host}/npm/{m.group(1)}/-/{file}"
            return self.send(200, json.dumps(doc).encode(), "application/json")
        self.send(404, b"not found\n", "text/plain")
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
open("/tmp/cert.pem", "w").write(os.environ["CERT"]); open("/tmp/key.pem", "w").write(os.environ["KEY"])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain("/tmp/cert.pem", "/tmp/key.pem")
tls = S(("", 443), H); tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
open("/tmp/ready", "w").write("ok")
tls.serve_forever()
`;

/** A running package test host. */
export interface PackageHost {
  /** PEM file of the CA that signed the host's certificate (for network.caBundlePath). */
  caPath: string;
  /** The CA's PEM text (the direct side trusts it). */
  ca: string;
  dispose(): Promise<void>;
}

/** Starts the package test host on `network`, serving `dir` (the cache, read-only). */
export async function startPackageHost(docker: Docker, network: string, dir: string): Promise<PackageHost> {
  const work = await mkdtemp(join(tmpdir(), "warden-bench-pkghost-"));
  let container: Docker.Container | undefined;
  const dispose = async () => {
    await container?.remove({ force: true }).catch(() => {});
    await rm(work, { recursive: true, force: true });
  };
  try {
    const { ca, cert, key } = makeTestCertificates(work, [PIP_HOST, NPM_HOST]);
    await writeFile(join(work, "ca.pem"), ca);
    container = await docker.createContainer({
      Image: DEFAULT_IMAGE,
      name: `warden-bench-pkghost-${randomBytes(4).toString("hex")}`,
      User: "0:0",
      Cmd: ["python3", "-c", SERVER],
      Env: [`CERT=${cert}`, `KEY=${key}`],
      Labels: { "io.warden.test": "egress-bench" },
      HostConfig: { NetworkMode: network, Binds: [`${dir}:/srv:ro`] },
      NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: [PIP_HOST, NPM_HOST] } } },
    });
    await container.start();
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await container.exec({ Cmd: ["cat", "/tmp/ready"], AttachStdout: true });
      const s = await r.start({ hijack: true, stdin: false });
      const chunks: Buffer[] = [];
      s.on("data", (c: Buffer) => chunks.push(c));
      await new Promise((res) => s.on("end", res));
      if (Buffer.concat(chunks).includes("ok")) break;
      if (Date.now() > until || !(await container.inspect()).State.Running)
        throw new Error("the package test host did not start");
      await new Promise((res) => setTimeout(res, 200));
    }
    return { caPath: join(work, "ca.pem"), ca, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
