/**
 * A small network client the egress tests run inside the sandbox (python3 from the image):
 * `get URL` (urllib: honours the proxy variables), `direct HOST PORT` (a TCP socket that ignores
 * them), `udp HOST PORT`, `dns NAME`, `sni PROXY CONNECT_HOST SNI [HOST [TARGET]]` (a CONNECT
 * tunnel whose ClientHello may name another host, and a GET of TARGET, default /hello, inside it
 * with Host HOST, default the SNI; the gateway's certificate is verified as any client would) and
 * `host PROXY URL HOST` (plain HTTP with another Host header), `plain-tunnel PROXY HOST:PORT` (a CONNECT
 * tunnel with a plain HTTP GET /hello inside it, no TLS).
 * Each prints one line: `OK …` or `ERR …`.
 */
import { readFile } from "node:fs/promises";

export const NET_CLIENT = String.raw`
import os, socket, ssl, sys, urllib.request
cmd, args = sys.argv[1], sys.argv[2:]
def proxy_sock(proxy):
    host, port = proxy.split("//")[1].split(":")
    return socket.create_connection((host, int(port)), timeout=10)
try:
    if cmd == "get":
        with urllib.request.urlopen(args[0], timeout=8) as r:
            print("OK", r.status, r.read().decode().strip())
    elif cmd == "direct":
        socket.create_connection((args[0], int(args[1])), timeout=3).close(); print("OK connected")
    elif cmd == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"leak", (args[0], int(args[1]))); print("OK sent")
    elif cmd == "dns":
        print("OK", sorted({a[4][0] for a in socket.getaddrinfo(args[0], 80)}))
    elif cmd == "sni":
        s = proxy_sock(args[0]); s.sendall(f"CONNECT {args[1]}:443 HTTP/1.1\r\nHost: {args[1]}:443\r\n\r\n".encode())
        head = s.recv(4096).decode(errors="replace").split("\r\n")[0]
        if " 200 " not in head + " ": print("ERR connect", head); sys.exit(1)
        t = ssl.create_default_context().wrap_socket(s, server_hostname=args[2])
        host = args[3] if len(args) > 3 else args[2]
        target = args[4] if len(args) > 4 else "/hello"
        t.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head = t.recv(4096).decode(errors="replace").split("\r\n")[0]
        print("OK" if " 200 " in head else "ERR", head)
    elif cmd == "plain-tunnel":
        s = proxy_sock(args[0]); s.sendall(f"CONNECT {args[1]} HTTP/1.1\r\nHost: {args[1]}\r\n\r\n".encode())
        head = s.recv(4096).decode(errors="replace").split("\r\n")[0]
        if " 200 " not in head + " ": print("ERR connect", head); sys.exit(1)
        s.sendall(f"GET /hello HTTP/1.1\r\nHost: {args[1]}\r\nConnection: close\r\n\r\n".encode())
        head = s.recv(4096).decode(errors="replace").split("\r\n")[0]
        print("OK" if " 200 " in head else "ERR", head)
    elif cmd == "host":
        s = proxy_sock(args[0]); s.sendall(f"GET {args[1]} HTTP/1.1\r\nHost: {args[2]}\r\nConnection: close\r\n\r\n".encode())
        head = s.recv(4096).decode(errors="replace").split("\r\n")[0]
        print("OK" if " 200 " in head else "ERR", head)
except SystemExit: raise
except BaseException as e:
    print("ERR", type(e).__name__, str(e)[:200]); sys.exit(1)
`;

/** One `kind: "network"` line of a server's audit.jsonl (the fields the tests read). */
export interface NetworkAuditLine {
  session: string;
  domain: string;
  decision: string;
  ask?: string;
  rule: string;
  insideTunnel?: true;
  bytesIn: number;
  /** The tool call running in the session when the connection started (src/server/sessions/running-calls.ts). */
  toolCallId?: string;
}

/** The `kind: "network"` lines of the audit.jsonl at `path`. */
export async function networkAuditLines(path: string): Promise<NetworkAuditLine[]> {
  return (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l.includes('"kind":"network"'))
    .map((l) => JSON.parse(l) as NetworkAuditLine);
}

/**
 * The records of `domain` in `audit` (filled by onConnection), once the gateway has logged `count`
 * of them, or whatever there is after 5 s (a record arrives when its connection ends).
 */
export async function auditRecordsOf<T extends { domain: string }>(
  audit: readonly T[],
  domain: string,
  count = 1,
): Promise<T[]> {
  while (audit.filter((a) => a.domain === domain).length < count)
    await new Promise((r) => setTimeout(r, 100));
  return audit.filter((a) => a.domain === domain);
}
