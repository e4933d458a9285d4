/**
 * Clients the gateway tests run inside the sandbox to see the gateway's wire behaviour exactly,
 * each reaching the gateway through the sandbox's proxy variables (HTTPS_PROXY, HTTP_PROXY):
 * - WIRE_CLIENT (python3 from the image):
 *   `connect HOST:PORT` sends `CONNECT HOST:PORT` and prints the status line the gateway answered,
 *   then `| no TLS` when it was not 200 (the client stops there, as curl does), else `| TLS then
 *   <the status line of a GET /hello inside, or the error's name>`;
 *   `ws URL [HOST]` opens a WebSocket (`wss://` through a CONNECT tunnel, `ws://` by its absolute
 *   `http://` URL to the proxy; with WIRE_DIRECT=1 in the environment, straight to the origin) with Host HOST (default the URL's), checks the Sec-WebSocket-Accept key, sends
 *   a text message and a 70000-byte binary one and prints `OK <status line> | <the text echoed> |
 *   <bytes echoed> bytes back`, or `ERR <status line>` when the answer was not 101.
 * - H2_CLIENT (node from the image): `URL [AUTHORITY]` opens a CONNECT tunnel to URL's host:443,
 *   TLS inside it offering ALPN h2 and http/1.1, and prints `ALPN <protocol the gateway chose>`
 *   and, when it is h2, ` | <:status>` of an HTTP/2 GET of URL's path with :authority AUTHORITY
 *   (default URL's host), then its body when the status is 200.
 * Each prints one line.
 */

export const WIRE_CLIENT = String.raw`
import base64, hashlib, os, socket, ssl, sys
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
def proxy_sock(var):
    host, port = os.environ[var].split("//")[1].rstrip("/").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)
def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk: raise EOFError(f"closed after {len(data)} of {n} bytes")
        data += chunk
    return data
def read_head(s):
    # A byte at a time: nothing after the head is consumed (it belongs to TLS or to frames).
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(1)
        if not chunk: break
        data += chunk
    return data.decode(errors="replace").split("\r\n")
def send_frame(s, op, payload):
    mask = os.urandom(4); n = len(payload)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else bytes([0x80 | 127]) + n.to_bytes(8, "big")
    s.sendall(bytes([0x80 | op]) + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
def read_frame(s):
    head = recv_exact(s, 2); n = head[1] & 0x7F
    if n == 126: n = int.from_bytes(recv_exact(s, 2), "big")
    elif n == 127: n = int.from_bytes(recv_exact(s, 8), "big")
    return head[0] & 0x0F, recv_exact(s, n)
cmd, args = sys.argv[1], sys.argv[2:]
try:
    if cmd == "connect":
        s = proxy_sock("HTTPS_PROXY"); s.sendall(f"CONNECT {args[0]} HTTP/1.1\r\nHost: {args[0]}\r\n\r\n".encode())
        status = read_head(s)[0]
        if " 200 " not in status + " ": print(status, "| no TLS"); sys.exit(0)
        host = args[0].rsplit(":", 1)[0].strip("[]")
        try:
            t = ssl.create_default_context().wrap_socket(s, server_hostname=host)
            t.sendall(f"GET /hello HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            print(status, "| TLS then", read_head(t)[0] or "EOF")
        except Exception as e: print(status, "| TLS then", type(e).__name__)
    elif cmd == "ws":
        scheme, rest = args[0].split("://", 1); host, _, path = rest.partition("/")
        key = base64.b64encode(os.urandom(16)).decode()
        expected = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if os.environ.get("WIRE_DIRECT"):
            # No gateway (the fixture's own check of the test host): straight to the origin.
            s = socket.create_connection((host, 443 if scheme == "wss" else 80), timeout=10); target = "/" + path
            if scheme == "wss": s = ssl._create_unverified_context().wrap_socket(s, server_hostname=host)
        elif scheme == "wss":
            s = proxy_sock("HTTPS_PROXY"); s.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
            status = read_head(s)[0]
            if " 200 " not in status + " ": print("ERR connect", status); sys.exit(1)
            s = ssl.create_default_context().wrap_socket(s, server_hostname=host); target = "/" + path
        else:
            s = proxy_sock("HTTP_PROXY"); target = "http://" + rest
        s.sendall((f"GET {target} HTTP/1.1\r\nHost: {args[1] if len(args) > 1 else host}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = read_head(s)
        if " 101 " not in head[0] + " ": print("ERR", head[0]); sys.exit(1)
        accept = [h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("sec-websocket-accept:")]
        if accept != [expected]: print("ERR accept", accept); sys.exit(1)
        send_frame(s, 1, f"hello over {scheme}".encode()); op, text = read_frame(s)
        big = os.urandom(70000); send_frame(s, 2, big); op2, back = read_frame(s)
        send_frame(s, 8, b"\x03\xe8"); read_frame(s)
        print("OK", head[0], "|", text.decode() if op == 1 else f"opcode {op}", "|", len(back) if op2 == 2 and back == big else "not the same", "bytes back")
except SystemExit: raise
except BaseException as e:
    print("ERR", type(e).__name__, str(e)[:200]); sys.exit(1)
`;

export const H2_CLIENT = `
import http from "node:http";
import http2 from "node:http2";
import tls from "node:tls";
const [url, authority] = process.argv.slice(2);
const u = new URL(url);
const proxy = new URL(process.env.HTTPS_PROXY);
const fail = (what) => { console.log("ERR " + what); process.exit(1); };
const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: u.hostname + ":443" });
req.on("error", (e) => fail(e.code ?? e.message));
req.on("connect", (res, socket) => {
  if (res.statusCode !== 200) fail("connect " + res.statusCode);
  const t = tls.connect({ socket, servername: u.hostname, ALPNProtocols: ["h2", "http/1.1"] }, () => {
    if (t.alpnProtocol !== "h2") { console.log("ALPN " + t.alpnProtocol); t.destroy(); return; }
    const session = http2.connect(url, { createConnection: () => t });
    session.on("error", (e) => fail(e.code ?? e.message));
    const stream = session.request({ ":path": u.pathname, ":authority": authority ?? u.host });
    let status = 0;
    const body = [];
    stream.on("response", (h) => { status = h[":status"]; });
    stream.on("data", (c) => body.push(c));
    stream.on("end", () => {
      const text = status === 200 ? " " + Buffer.concat(body).toString().trim() : "";
      console.log("ALPN h2 | " + status + text);
      session.close();
    });
    stream.on("error", (e) => fail(e.code ?? e.message));
  });
  t.on("error", (e) => fail(e.code ?? e.message));
});
req.end();
`;
