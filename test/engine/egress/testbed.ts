/**
 * Test hosts for the egress tests, on engine networks this fixture creates (no internet needed):
 * - `public`: a network in a documentation range the gateway does not refuse (a /27 of
 *   192.0.2.0/24, 198.51.100.0/24 or 203.0.113.0/24 that shadows nothing the host uses:
 *   test/helpers/test-network.ts) holding one host with the names allowed.test, denied.test,
 *   ask.test, other.test, pypi.test and npm.test, serving HTTP (80) and HTTPS (443, a certificate
 *   of a CA made here that the sandbox trusts through network.caBundlePath), a /simple/ package
 *   index with one pure-Python wheel (tinypkg 0.1), an npm registry at /npm/ with one package
 *   (tinynpm 1.0.0: its document at /npm/tinynpm, its tarball under /npm/tinynpm/-/), /bytes/N
 *   (N bytes), /ws (a WebSocket echo: RFC 6455's handshake, then each message sent back),
 *   /malformed (a response whose Content-Length is not a number) and a UDP port (5353) that
 *   records what reaches it;
 * - `private`: a network in 10.213.0.0/16 (likewise) with one host named private.test (refused by
 *   address).
 * Every host echoes the Host header it got (`/hello`) and logs each request, so a test can tell
 * which name reached which host. `dispose` removes the containers, networks and files.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { SESSION_LABEL } from "../../../src/egress/index.js";
import { DEFAULT_IMAGE, getDocker, LABEL } from "../../../src/sandbox/index.js";
import { testNetCandidates } from "../../helpers/subnet-pick.js";
import { createTestNetwork } from "../../helpers/test-network.js";

/** Names the public test host answers to. */
export const PUBLIC_NAMES = [
  "allowed.test",
  "denied.test",
  "ask.test",
  "other.test",
  "pypi.test",
  "npm.test",
];

const SERVER = String.raw`
import base64, hashlib, http.server, io, json, os, socket, ssl, tarfile, threading, zipfile
def wheel():
    files = {"tinypkg/__init__.py": "VALUE = 42\n",
             "tinypkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
             "tinypkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: warden-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = ""
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(text.encode())}\n"
    files["tinypkg-0.1.dist-info/RECORD"] = record + "tinypkg-0.1.dist-info/RECORD,,\n"
    os.makedirs("/srv/simple/tinypkg", exist_ok=True)
    with zipfile.ZipFile("/srv/simple/tinypkg/tinypkg-0.1-py3-none-any.whl", "w") as z:
        for path, text in files.items(): z.writestr(path, text)
wheel()
def npm_package():
    os.makedirs("/srv/npm/tinynpm/-", exist_ok=True)
    path = "/srv/npm/tinynpm/-/tinynpm-1.0.0.tgz"
    with tarfile.open(path, "w:gz") as t:
        for name, text in {"package/package.json": '{"name":"tinynpm","version":"1.0.0","main":"index.js"}\n',
                           "package/index.js": "module.exports = { value: 42 };\n"}.items():
            info = tarfile.TarInfo(name); data = text.encode(); info.size = len(data); info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    data = open(path, "rb").read()
    return {"sha1": hashlib.sha1(data).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}
NPM = npm_package()
os.chdir("/srv")
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle holds the body until the
    # client's delayed ACK (~40 ms per request on a kept-alive connection).
    disable_nagle_algorithm = True
    def log_message(self, *a): pass
    def end_headers(self):
        # Every response to rebind.test closes its connection: each request through the gateway
        # then needs a new connection to the origin, and so a new resolution of the name.
        if (self.headers.get("Host") or "").split(":")[0] == "rebind.test":
            self.send_header("Connection", "close"); self.close_connection = True
        super().end_headers()
    def do_GET(self):
        with open("/tmp/requests.log", "a") as f: f.write(f"{self.headers.get('Host')} {self.path}\n")
        with open("/tmp/headers.log", "a") as f: f.write(json.dumps([self.path, self.headers.items()]) + "\n")
        if self.path.startswith("/bytes/"):
            n = int(self.path.split("/")[2]); self.send_response(200)
            self.send_header("Content-Length", str(n)); self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                k = min(n, len(chunk)); self.wfile.write(chunk[:k]); n -= k
            return
        if self.path == "/npm/tinynpm":
            dist = {"shasum": NPM["sha1"], "integrity": NPM["integrity"],
                    "tarball": f"https://{self.headers.get('Host')}/npm/tinynpm/-/tinynpm-1.0.0.tgz"}
            doc = {"name": "tinynpm", "dist-tags": {"latest": "1.0.0"},
                   "versions": {"1.0.0": {"name": "tinynpm", "version": "1.0.0", "dist": dist}}}
            body = json.dumps(doc).encode(); self.send_response(200)
            self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(body)))
            self.end_headers(); self.wfile.write(body); return
        if self.path == "/malformed":
            # A response no proxy can parse (its Content-Length is not a number).
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello"); self.wfile.flush()
            self.close_connection = True; return
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        if self.path == "/hello":
            body = f"hello from {os.environ['ROLE']} as {self.headers.get('Host')}\n".encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body); return
        return super().do_GET()
    def websocket(self):
        # RFC 6455: the handshake's accept key, then each data frame echoed (unmasked), a ping
        # answered by a pong, a close by a close.
        key = self.headers.get("Sec-WebSocket-Key", "") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        self.send_response(101); self.send_header("Upgrade", "websocket"); self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())
        self.end_headers(); self.close_connection = True
        def frame(op, data):
            n = len(data)
            size = bytes([n]) if n < 126 else bytes([126]) + n.to_bytes(2, "big") if n < 65536 else bytes([127]) + n.to_bytes(8, "big")
            return bytes([0x80 | op]) + size + data
        while True:
            head = self.rfile.read(2)
            if len(head) < 2: return
            op, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126: n = int.from_bytes(self.rfile.read(2), "big")
            elif n == 127: n = int.from_bytes(self.rfile.read(8), "big")
            mask = self.rfile.read(4) if head[1] & 0x80 else bytes(4)
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            self.wfile.write(frame(10 if op == 9 else op, data[:2] if op == 8 else data)); self.wfile.flush()
            if op == 8: return
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
open("/tmp/cert.pem", "w").write(os.environ["CERT"]); open("/tmp/key.pem", "w").write(os.environ["KEY"])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain("/tmp/cert.pem", "/tmp/key.pem")
plain = S(("", 80), H); tls = S(("", 443), H)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("", 5353))
    while True:
        data, peer = s.recvfrom(2048)
        with open("/tmp/udp.log", "a") as f: f.write(f"{peer[0]} {data!r}\n")
threading.Thread(target=udp, daemon=True).start()
threading.Thread(target=plain.serve_forever, daemon=True).start()
open("/tmp/ready", "w").write("ok")
tls.serve_forever()
`;

/**
 * A name no host has: a DNS test host (dns-host.ts) answers it with whatever address a test sets;
 * the public host's certificate names it, so a TLS connection that reaches that host verifies,
 * and its responses for it close their connection (no connection to the origin is reused).
 */
export const REBIND_NAME = "rebind.test";

/** A running testbed. */
export interface EgressTestbed {
  publicNetwork: string;
  privateNetwork: string;
  /** The public host's address (the IP-literal target). */
  publicAddress: string;
  privateAddress: string;
  /** PEM of the test CA, for network.caBundlePath. */
  caBundlePath: string;
  /**
   * What a host logged: requests ("<Host> <path>" lines), their headers (one JSON `[path, [[name,
   * value], …]]` per line) or UDP datagrams.
   */
  hostLog(which: "public" | "private", log: "requests" | "headers" | "udp"): Promise<string>;
  dispose(): Promise<void>;
}

/** Makes a CA and one server certificate for every test name with the host's openssl. */
/**
 * A test CA ("warden test CA", RSA 2048, 2 days) and a server certificate it signs for `names`
 * (the first is the subject), made with the host's openssl in `dir`: PEM texts.
 */
export function makeTestCertificates(
  dir: string,
  names: readonly string[],
): { ca: string; cert: string; key: string } {
  const ossl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  ossl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=warden test CA",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  );
  ossl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    `/CN=${names[0]}`,
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
  );
  const sans = names.map((n) => `DNS:${n}`).join(",");
  writeFileSync(
    join(dir, "ext.cnf"),
    `subjectAltName=${sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  ossl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
    "-out",
    "server.pem",
  );
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  return { ca: read("ca.pem"), cert: read("server.pem"), key: read("server.key") };
}

/** Options of {@link startEgressTestbed}. */
export interface EgressTestbedOptions {
  /**
   * Containers the public network must have room for besides its test host: every gateway whose
   * egress network it is takes an address there. Default 20 (a /27); at most 252 (a /24).
   */
  publicRoom?: number;
}

/** Starts the testbed. */
export async function startEgressTestbed(options: EgressTestbedOptions = {}): Promise<EgressTestbed> {
  const publicCandidates = testNetCandidates((options.publicRoom ?? 20) + 1);
  const docker = getDocker();
  const dir = mkdtempSync(join(tmpdir(), "warden-egress-"));
  const tag = randomBytes(4).toString("hex");
  const publicNetwork = `warden-test-pub-${tag}`;
  const privateNetwork = `warden-test-priv-${tag}`;
  const containers: Docker.Container[] = [];
  const dispose = async () => {
    for (const c of containers) await c.remove({ force: true }).catch(() => {});
    for (const n of [publicNetwork, privateNetwork])
      await docker
        .getNetwork(n)
        .remove()
        .catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const { ca, cert, key } = makeTestCertificates(dir, [...PUBLIC_NAMES, "private.test", REBIND_NAME]);
    writeFileSync(join(dir, "ca-bundle.pem"), ca);
    // Blocks of the documentation ranges the gateway does not refuse (TEST-NET-1..3; /27s unless
    // publicRoom needs more) and /24s of 10.213/16; test-network.ts leaves out any that overlaps
    // what the host uses (routes, addresses, resolved registries), so parallel runs and the host's
    // own traffic do not collide.
    const labels = { "io.warden.test": "egress" };
    await createTestNetwork(docker, {
      name: publicNetwork,
      candidates: publicCandidates,
      labels,
    });
    await createTestNetwork(docker, {
      name: privateNetwork,
      candidates: Array.from({ length: 16 }, (_, i) => `10.213.${i * 16}.0/24`),
      labels,
    });
    const start = async (role: "public" | "private", network: string, aliases: string[]) => {
      const c = await docker.createContainer({
        Image: DEFAULT_IMAGE,
        User: "0:0",
        Cmd: ["python3", "-c", SERVER],
        Env: [`CERT=${cert}`, `KEY=${key}`, `ROLE=${role}`],
        Labels: { "io.warden.test": "egress" },
        HostConfig: { NetworkMode: network },
        NetworkingConfig: { EndpointsConfig: { [network]: { Aliases: aliases } } },
      });
      containers.push(c);
      await c.start();
      // Until the server is up (the hook's timeout, not a count of polls, bounds the wait).
      for (;;) {
        const out = await execIn(c, ["cat", "/tmp/ready"]).catch(() => "");
        if (out === "ok") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const info = await c.inspect();
      return { container: c, address: info.NetworkSettings.Networks[network]?.IPAddress ?? "" };
    };
    const pub = await start("public", publicNetwork, PUBLIC_NAMES);
    const priv = await start("private", privateNetwork, ["private.test"]);
    return {
      publicNetwork,
      privateNetwork,
      publicAddress: pub.address,
      privateAddress: priv.address,
      caBundlePath: join(dir, "ca-bundle.pem"),
      hostLog: (which, log) =>
        execIn((which === "public" ? pub : priv).container, [
          "sh",
          "-c",
          `cat /tmp/${log}.log 2>/dev/null; true`,
        ]),
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** Runs argv in a test host; resolves its stdout. */
export async function execIn(container: Docker.Container, argv: string[]): Promise<string> {
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  const sink = { write: (c: Buffer) => chunks.push(c) };
  getDocker().modem.demuxStream(stream, sink as never, { write: () => true } as never);
  await new Promise((r) => stream.on("end", r));
  return Buffer.concat(chunks).toString("utf8");
}

/** The egress resources of session `sessionId` on the engine: "gateway" / "network" entries, sorted. */
export async function egressOf(sessionId: string): Promise<string[]> {
  const filters = { label: [`${SESSION_LABEL}=${sessionId}`] };
  const docker = getDocker();
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters });
  return [...containers.map(() => "gateway"), ...networks.map(() => "network")].sort();
}

/** Removes the session networks `tenant` left behind (a test that failed midway); resolves their names. */
export async function removeTenantNetworks(tenant: string): Promise<string[]> {
  const docker = getDocker();
  const left = await docker.listNetworks({ filters: { label: [`${LABEL.tenant}=${tenant}`] } });
  for (const n of left)
    await docker
      .getNetwork(n.Id)
      .remove()
      .catch(() => {});
  return left.map((n) => n.Name);
}
