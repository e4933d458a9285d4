/**
 * Engine networks for test hosts, on a subnet that shadows nothing the host uses. What the host
 * uses is read, never assumed: its routes (all tables), interface addresses, /etc/hosts entries,
 * resolv.conf nameservers, the engine's existing networks, and the addresses the system resolver
 * gives for the hosts of the npm registry (`npm config get registry`), the pip index
 * (PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / `pip config`, else pip's default pypi.org and
 * files.pythonhosted.org when pip is installed), the apt sources and the Go proxy (`go env
 * GOPROXY`) when those tools are there. The choice itself is subnet-pick.ts (pure, unit-tested).
 */
import { execFile } from "node:child_process";
import { lookup } from "node:dns/promises";
import { readdir, readFile } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import { promisify } from "node:util";
import type Docker from "dockerode";
import {
  aptSourceHosts,
  type HeldRange,
  hostsFileEntries,
  noFreeSubnetMessage,
  pickSubnet,
  resolvConfNameservers,
  routesFromIpJson,
  urlHost,
} from "./subnet-pick.js";

const run = promisify(execFile);

/** stdout of a command, or undefined when it is missing or fails (a tool the host does not have). */
async function output(file: string, args: string[]): Promise<string | undefined> {
  try {
    return (await run(file, args, { encoding: "utf8" })).stdout;
  } catch {
    return undefined;
  }
}

async function text(path: string): Promise<string> {
  return readFile(path, "utf8").catch(() => "");
}

/** The hosts the package tools of this machine fetch from, each with the setting that names it. */
async function toolHosts(): Promise<{ host: string; source: string }[]> {
  const out: { host: string; source: string }[] = [];
  const add = (url: string | undefined, source: string) => {
    const host = url && urlHost(url);
    if (host) out.push({ host, source });
  };
  add((await output("npm", ["config", "get", "registry"]))?.trim(), "npm registry");
  const pipEnv = [process.env.PIP_INDEX_URL, ...(process.env.PIP_EXTRA_INDEX_URL ?? "").split(/\s+/)];
  for (const url of pipEnv) add(url, "pip index (environment)");
  const pipConfig = await output("python3", ["-m", "pip", "config", "list"]);
  for (const m of pipConfig?.matchAll(/^\S*?(?:extra-)?index-url='([^']*)'/gm) ?? [])
    add(m[1], "pip index (pip config)");
  if (pipConfig !== undefined && !out.some((h) => h.source.startsWith("pip"))) {
    for (const host of ["pypi.org", "files.pythonhosted.org"])
      out.push({ host, source: "pip's default index" });
  }
  const goProxy = (await output("go", ["env", "GOPROXY"]))?.trim() ?? process.env.GOPROXY;
  for (const url of goProxy?.split(/[,|]/) ?? []) add(url, "Go proxy");
  const aptDir = "/etc/apt/sources.list.d";
  const aptFiles = (await readdir(aptDir).catch(() => [] as string[]))
    .filter((f) => /\.(list|sources)$/.test(f))
    .map((f) => `${aptDir}/${f}`);
  for (const file of ["/etc/apt/sources.list", ...aptFiles]) {
    for (const host of aptSourceHosts(await text(file))) out.push({ host, source: `apt source in ${file}` });
  }
  return out;
}

/** Routes of every table: `ip -j`, else the main table of /proc/net/route. */
async function routes(): Promise<HeldRange[]> {
  const json = await output("ip", ["-4", "-j", "route", "show", "table", "all"]);
  if (json !== undefined) return routesFromIpJson(json);
  const held: HeldRange[] = [];
  for (const line of (await text("/proc/net/route")).split("\n").slice(1)) {
    const [dev, dst, , , , , , mask] = line.trim().split(/\s+/);
    if (!dev || !dst || !mask) continue;
    const quad = (hex: string) => (Buffer.from(hex, "hex").reverse().toJSON().data as number[]).join(".");
    const prefix = Number(BigInt(`0x${mask}`).toString(2).replace(/0/g, "").length);
    if (prefix > 0)
      held.push({ cidr: `${quad(dst)}/${prefix}`, holder: `route ${quad(dst)}/${prefix} dev ${dev}` });
  }
  return held;
}

let hostHeld: Promise<HeldRange[]> | undefined;

/** What the host itself holds (read once per process: it does not change while tests run). */
export function hostHeldRanges(): Promise<HeldRange[]> {
  hostHeld ??= (async () => {
    const held = [...(await routes())];
    for (const [dev, list] of Object.entries(networkInterfaces()))
      for (const a of list ?? [])
        if (a.family === "IPv4")
          held.push({ cidr: a.cidr ?? a.address, holder: `address ${a.cidr} of ${dev}` });
    held.push(...hostsFileEntries(await text("/etc/hosts")));
    held.push(...resolvConfNameservers(await text("/etc/resolv.conf")));
    for (const { host, source } of await toolHosts()) {
      const addresses = await lookup(host, { all: true, family: 4 }).catch(() => []);
      // Its whole /24: a name served round-robin resolves to another address of its block next time.
      for (const { address } of addresses)
        held.push({
          cidr: `${address.split(".").slice(0, 3).join(".")}.0/24`,
          holder: `${host} (${source}) resolves to ${address}`,
        });
    }
    return held;
  })();
  return hostHeld;
}

/** The engine's networks' IPv4 subnets (asked each time: parallel runs add and remove networks). */
async function engineNetworks(docker: Docker): Promise<HeldRange[]> {
  const held: HeldRange[] = [];
  for (const n of await docker.listNetworks())
    for (const c of n.IPAM?.Config ?? [])
      if (c.Subnet) held.push({ cidr: c.Subnet, holder: `engine network ${n.Name}` });
  return held;
}

/** Options of {@link createTestNetwork}. */
export interface TestNetworkOptions {
  /** The network's name. */
  name: string;
  /** Candidate IPv4 subnets, tried in random order (parallel runs then rarely want the same one). */
  candidates: readonly string[];
  labels: Record<string, string>;
  /** Docker's `--internal`. */
  internal?: boolean;
}

/**
 * Creates a bridge network on a candidate that overlaps nothing the host uses; resolves its subnet.
 * Throws (listing each candidate and what holds it) when none is free. A candidate the engine
 * refuses as overlapping (another run took it meanwhile) is marked held and the next one tried.
 */
export async function createTestNetwork(docker: Docker, options: TestNetworkOptions): Promise<string> {
  return withFreeSubnet(docker, options.name, options.candidates, async (subnet) => {
    await docker.createNetwork({
      Name: options.name,
      Driver: "bridge",
      CheckDuplicate: true,
      Internal: options.internal ?? false,
      Labels: options.labels,
      IPAM: { Config: [{ Subnet: subnet }] },
    });
    return subnet;
  });
}

/** Thrown by a {@link withFreeSubnet} attempt when the engine refused its subnet as taken. */
export class SubnetTakenError extends Error {}

/**
 * Runs `attempt` with a candidate subnet (IPv4 CIDR, candidates tried in random order) that
 * overlaps nothing the host uses (hostHeldRanges) nor any engine network; resolves what it
 * resolves. `attempt` creates the network itself (through the API, or a documented `docker network
 * create`); when the engine refuses that subnet as overlapping or in use (another run took it since
 * the pick), it throws, and an error that is a SubnetTakenError or whose message says so marks the
 * candidate held and the next one is tried. Other errors propagate. Throws naming each candidate and
 * what holds it when none is free; `network` names the network in that message.
 */
export async function withFreeSubnet<T>(
  docker: Docker,
  network: string,
  candidates: readonly string[],
  attempt: (subnet: string) => Promise<T>,
): Promise<T> {
  const order = [...candidates].sort(() => Math.random() - 0.5);
  const held = [...(await hostHeldRanges()), ...(await engineNetworks(docker))];
  for (;;) {
    const pick = pickSubnet(order, held);
    if (pick.subnet === undefined) throw new Error(noFreeSubnetMessage(network, pick.blocked));
    try {
      return await attempt(pick.subnet);
    } catch (err) {
      const message = String((err as Error).message);
      if (!(err instanceof SubnetTakenError) && !/overlap|in use/i.test(message)) throw err;
      held.push({ cidr: pick.subnet, holder: `the engine refused it: ${message.trim()}` });
    }
  }
}
