/**
 * Real ways to end a Kubernetes exec stream under a live session, for test/k8s/stream-recovery.test.ts:
 * - cutSocket: the kernel destroys this process's TCP connection to the API server that carries
 *   the stream (`ss -K`, SOCK_DESTROY: the controller's socket fails, the API server gets a RST);
 *   the connection is found by what it carries, not by a name: the one whose received bytes grew
 *   by what a command just printed.
 * - idleProxy: a TCP forwarder to the API server that closes any connection that carried no byte
 *   for `idleMs`, as a streaming server's idle timeout does (containerd `stream_idle_timeout`).
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";

const run = promisify(execFile);

/** Where the API server of `kubeconfig` listens. */
export function apiServerOf(kubeconfig: string): { host: string; port: number } {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const url = new URL(config.getCurrentCluster()?.server ?? "");
  return { host: url.hostname, port: Number(url.port || 443) };
}

/** The `ss` filter of established connections to `api`. */
function toApi(api: { host: string; port: number }): string[] {
  return ["state", "established", "dst", api.host, "dport", "=", `:${api.port}`];
}

/** This process's established connections to `api` by local port, with the bytes each received. */
async function connections(api: { host: string; port: number }): Promise<Map<number, number>> {
  const { stdout } = await run("ss", ["-tnipH", ...toApi(api)]);
  const found = new Map<number, number>();
  // One socket per line, its TCP info on the following indented line.
  const records = stdout.split(/\n(?=\S)/);
  for (const record of records) {
    if (!record.includes(`pid=${process.pid},`)) continue;
    const local = /^\S+\s+\S+\s+\S+:(\d+)\s/.exec(record);
    const received = /bytes_received:(\d+)/.exec(record);
    if (local) found.set(Number(local[1]), Number(received?.[1] ?? 0));
  }
  return found;
}

/**
 * Destroys the connection that carries a stream: `produce` makes at least `bytes` arrive on it;
 * the one connection of this process to `api` whose received bytes grew that much is killed with
 * `ss -K`. Resolves with its local port; rejects naming what was found when not exactly one
 * connection qualifies or the kernel did not destroy it (ss -K needs CONFIG_INET_DIAG_DESTROY and root).
 */
export async function cutSocket(
  api: { host: string; port: number },
  bytes: number,
  produce: () => Promise<unknown>,
): Promise<number> {
  const before = await connections(api);
  await produce();
  const after = await connections(api);
  const grown = [...after].filter(([port, received]) => received - (before.get(port) ?? 0) >= bytes);
  if (grown.length !== 1)
    throw new Error(
      `expected one connection that received ${bytes} bytes, found ${JSON.stringify(grown)} of ${JSON.stringify([...after])}`,
    );
  const port = grown[0]?.[0] ?? 0;
  await run("ss", ["-K", "-tn", ...toApi(api), "sport", "=", `:${port}`]);
  if ((await connections(api)).has(port))
    throw new Error(
      `ss -K did not destroy the connection from port ${port} (kernel without CONFIG_INET_DIAG_DESTROY, or not root?)`,
    );
  return port;
}

/** A forwarder to the API server that closes idle connections; `closedIdle` counts them. */
export interface IdleProxy {
  /** A copy of the kubeconfig whose server is this proxy (same certificates: the API server's cert names 127.0.0.1). */
  kubeconfig: string;
  closedIdle: number;
  close(): Promise<void>;
}

/**
 * Starts a TCP forwarder on 127.0.0.1 to `kubeconfig`'s API server that closes both sides of a
 * connection after `idleMs` without a byte either way (checked every 100 ms), and writes a
 * kubeconfig for it to `path`.
 */
export async function idleProxy(kubeconfig: string, path: string, idleMs: number): Promise<IdleProxy> {
  const api = apiServerOf(kubeconfig);
  const live = new Set<{ a: Socket; b: Socket; last: number }>();
  const state = { closedIdle: 0 };
  const server: Server = createServer((a) => {
    const b = tcpConnect(api.port, api.host);
    const pair = { a, b, last: Date.now() };
    live.add(pair);
    const end = () => {
      live.delete(pair);
      a.destroy();
      b.destroy();
    };
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      from.on("data", (chunk: Buffer) => {
        pair.last = Date.now();
        to.write(chunk);
      });
      from.on("close", end);
      from.on("error", end);
    }
  });
  const sweep = setInterval(() => {
    for (const pair of live) {
      if (Date.now() - pair.last < idleMs) continue;
      state.closedIdle++;
      live.delete(pair);
      pair.a.destroy();
      pair.b.destroy();
    }
  }, 100);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const exported = JSON.parse(config.exportConfig()) as { clusters: Array<{ cluster: { server: string } }> };
  for (const c of exported.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
  await writeFile(path, JSON.stringify(exported), { mode: 0o600 });
  return {
    kubeconfig: path,
    get closedIdle() {
      return state.closedIdle;
    },
    async close() {
      clearInterval(sweep);
      for (const pair of live) {
        pair.a.destroy();
        pair.b.destroy();
      }
      await new Promise((r) => server.close(r));
    },
  };
}
