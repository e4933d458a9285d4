/**
 * A wire-level probe the gateway-hardening tests run inside the sandbox (python3 from the image). Each command
 * prints what the gateway answered, as `repr` of the first bytes (so the exact status line shows):
 * - `raw BYTES`: sends BYTES (Python escapes: `\r\n`) to the proxy (HTTPS_PROXY's address);
 * - `tunnel HOST BYTES`: CONNECT HOST:443, TLS with SNI HOST, then BYTES inside;
 * - `reuse HOST:PORT SRCPORT`: two CONNECTs in turn from the same source port (the gateway closes
 *   the first, after a non-TLS record), printing each status line;
 * - `flood N HOST:PORT`: N CONNECTs at once, printing the count of each status line;
 * - `hold N SECONDS`: opens N connections to the proxy and sends nothing for SECONDS;
 * - `holdfat N SECONDS SIZE`: as hold, each connection having sent a request head that stops
 *   inside a SIZE-byte header line;
 * - `bighost SIZE`: CONNECT to a name of SIZE letters (port 443), printing the status line.
 */
export const WIRE_PROBE = String.raw`
import os, socket, ssl, sys, time, threading, collections
def proxy():
    host, port = os.environ["HTTPS_PROXY"].split("//")[1].rstrip("/").rsplit(":", 1)
    return host, int(port)
def readall(s, t=3):
    s.settimeout(t); data = b""
    try:
        while True:
            c = s.recv(65536)
            if not c: break
            data += c
    except Exception: pass
    return data
def head_of(s):
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c: break
        head += c
    return head
esc = lambda t: t.encode().decode("unicode_escape").encode("latin1")
cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "raw":
    s = socket.create_connection(proxy(), timeout=5); s.sendall(esc(args[0])); print(repr(readall(s)[:300]))
elif cmd == "tunnel":
    h = args[0]
    s = socket.create_connection(proxy(), timeout=5)
    s.sendall(f"CONNECT {h}:443 HTTP/1.1\r\nHost: {h}:443\r\n\r\n".encode())
    head = head_of(s)
    if b" 200 " not in head: print("CONNECT", repr(head)); sys.exit()
    t = ssl.create_default_context().wrap_socket(s, server_hostname=h)
    t.sendall(esc(args[1])); print(repr(readall(t)[:600]))
elif cmd == "reuse":
    h, port = args[0], int(args[1])
    for i in range(2):
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("", port))
        try: s.connect(proxy())
        except OSError as e: print(i, "connect", e); continue
        s.sendall(f"CONNECT {h} HTTP/1.1\r\nHost: {h}\r\n\r\n".encode())
        print(i, head_of(s).split(b"\r\n")[0].decode())
        s.sendall(b"\x16\x03\x01\x00\x05hello")
        readall(s, 2); s.close(); time.sleep(1)
elif cmd == "flood":
    n, target = int(args[0]), args[1]; out = collections.Counter()
    def one():
        try:
            s = socket.create_connection(proxy(), timeout=20)
            s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            out[head_of(s).split(b"\r\n")[0].decode()] += 1; s.close()
        except Exception as e: out[type(e).__name__] += 1
    ts = [threading.Thread(target=one) for _ in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]; print(dict(out))
elif cmd == "hold":
    n, secs = int(args[0]), float(args[1]); socks = []
    for _ in range(n):
        try: socks.append(socket.create_connection(proxy(), timeout=5))
        except Exception as e: print("after", len(socks), type(e).__name__, e); break
    print("open", len(socks)); time.sleep(secs)
elif cmd == "holdfat":
    n, secs, size = int(args[0]), float(args[1]), int(args[2]); socks = []
    junk = b"GET http://allowed.test/ HTTP/1.1\r\nX-Pad: " + b"a" * size
    for _ in range(n):
        try:
            s = socket.create_connection(proxy(), timeout=5); s.sendall(junk); socks.append(s)
        except Exception as e: print("after", len(socks), type(e).__name__, e); break
    print("open", len(socks)); time.sleep(secs)
elif cmd == "bighost":
    s = socket.create_connection(proxy(), timeout=5); h = "a" * int(args[0])
    s.sendall(f"CONNECT {h}:443 HTTP/1.1\r\nHost: x\r\n\r\n".encode()); print(head_of(s).split(b"\r\n")[0].decode())
`;
