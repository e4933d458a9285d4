/**
 * Picking a subnet for a test network (pure: no I/O; test/helpers/test-network.ts gathers the
 * inputs). A bridge network puts a route for its subnet on the host, so a subnet that overlaps a
 * route, an interface address or an address the host resolves for a name it uses (a package
 * registry, a nameserver) would take that traffic and cut the host off while the test runs. Every
 * candidate is checked against every held range; the first free one wins, and when none is free
 * the answer names each candidate and what holds it. IPv4 only: test networks are IPv4.
 */

/** A range the host uses, and what uses it (for the error when no candidate is free). */
export interface HeldRange {
  /** IPv4 CIDR (`10.0.0.0/8`) or bare address (a /32); IPv6 entries are ignored. */
  cidr: string;
  /** What holds it, worded for a person: `route 172.17.0.0/16 dev docker0 (table main)`. */
  holder: string;
}

/** A candidate no test network may take, with every held range it overlaps. */
export interface BlockedCandidate {
  subnet: string;
  holders: string[];
}

/** The first free candidate, or (none free) every candidate with what blocks it. */
export type SubnetPick = { subnet: string } | { subnet: undefined; blocked: BlockedCandidate[] };

interface Block {
  /** First address as an unsigned 32-bit integer. */
  first: number;
  /** Last address, inclusive. */
  last: number;
}

/** An IPv4 CIDR or bare address as its first and last address; undefined for anything else (IPv6, "default"). */
export function ipv4Block(cidr: string): Block | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(cidr.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const prefix = m[5] === undefined ? 32 : Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  const first = Math.floor(address / size) * size;
  return { first, last: first + size - 1 };
}

/** Whether two IPv4 ranges share an address (false when either is not IPv4). */
export function overlaps(a: string, b: string): boolean {
  const x = ipv4Block(a);
  const y = ipv4Block(b);
  return x !== undefined && y !== undefined && x.first <= y.last && y.first <= x.last;
}

/**
 * The first candidate (in the order given) that overlaps no held range. A held range of prefix 0
 * (a default route) holds nothing: it is where traffic goes when no network claims it.
 */
export function pickSubnet(candidates: readonly string[], held: readonly HeldRange[]): SubnetPick {
  const real = held.filter((h) => ipv4Block(h.cidr) !== undefined && !/\/0$/.test(h.cidr.trim()));
  const blocked: BlockedCandidate[] = [];
  for (const subnet of candidates) {
    const holders = real.filter((h) => overlaps(subnet, h.cidr)).map((h) => h.holder);
    if (holders.length === 0) return { subnet };
    blocked.push({ subnet, holders: [...new Set(holders)] });
  }
  return { subnet: undefined, blocked };
}

/** The error text when no candidate is free: each candidate, what holds it, and the fix. */
export function noFreeSubnetMessage(network: string, blocked: readonly BlockedCandidate[]): string {
  const lines = blocked.map((b) => `  ${b.subnet}: ${b.holders.join("; ")}`);
  return [
    `no free subnet for test network ${network}: each candidate overlaps a range this host uses, and a network there would take its traffic:`,
    ...lines,
    "Free one of these ranges (remove the route, network or name that holds it) or run the tests on a host where one is unused.",
  ].join("\n");
}

/** One entry of `ip -j route show table all`. */
interface IpRoute {
  dst?: string;
  dev?: string;
  table?: string;
  type?: string;
}

/** Held ranges of `ip -4 -j route show table all` output (JSON text); the default route is left out. */
export function routesFromIpJson(json: string): HeldRange[] {
  return (JSON.parse(json) as IpRoute[])
    .filter((r) => r.dst !== undefined && r.dst !== "default")
    .map((r) => ({
      cidr: r.dst as string,
      holder: `route ${r.type && r.type !== "unicast" ? `${r.type} ` : ""}${r.dst}${r.dev ? ` dev ${r.dev}` : ""} (table ${r.table ?? "main"})`,
    }));
}

/** Address → names of an /etc/hosts text (comments and IPv6 left out). */
export function hostsFileEntries(text: string): HeldRange[] {
  const out: HeldRange[] = [];
  for (const line of text.split("\n")) {
    const [address, ...names] = line.replace(/#.*/, "").trim().split(/\s+/);
    if (address && ipv4Block(address))
      out.push({ cidr: address, holder: `/etc/hosts: ${address} ${names.join(" ")}` });
  }
  return out;
}

/** The IPv4 nameservers of a resolv.conf text. */
export function resolvConfNameservers(text: string): HeldRange[] {
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)]
    .map((m) => m[1] as string)
    .filter((a) => ipv4Block(a) !== undefined)
    .map((a) => ({ cidr: a, holder: `nameserver ${a} (/etc/resolv.conf)` }));
}

/**
 * Host names of the URIs of apt source files: one-line `.list` entries (`deb [opts] URI suite …`)
 * and deb822 `.sources` stanzas (`URIs: …`). Only http(s) URIs name a host.
 */
export function aptSourceHosts(text: string): string[] {
  const uris: string[] = [];
  for (const line of text.split("\n")) {
    const oneLine = /^\s*deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line);
    if (oneLine) uris.push(oneLine[1] as string);
    const deb822 = /^\s*URIs:\s*(.+)$/i.exec(line);
    if (deb822) uris.push(...(deb822[1] as string).trim().split(/\s+/));
  }
  return [...new Set(uris.flatMap((u) => urlHost(u) ?? []))];
}

/** The host of an http(s) URL, or undefined (a file: URI, `direct`, `off`, text). */
export function urlHost(url: string): string | undefined {
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? u.hostname.replace(/^\[|\]$/g, "") : undefined;
  } catch {
    return undefined;
  }
}

/** The documentation ranges (RFC 5737 TEST-NET-1..3), which the gateway does not refuse. */
const TEST_NETS = ["192.0.2", "198.51.100", "203.0.113"] as const;

/**
 * Candidate subnets for a test network that must hold `containers` containers: the TEST-NET /24s
 * cut into the smallest equal blocks (a /27 at least, so parallel runs can share a /24) whose
 * addresses, less the network's, the broadcast and the bridge's own, are enough. Throws when even
 * a whole /24 (253 containers) is too small.
 */
export function testNetCandidates(containers: number): string[] {
  for (let prefix = 27; prefix >= 24; prefix--) {
    const size = 2 ** (32 - prefix);
    if (size - 3 < containers) continue;
    return TEST_NETS.flatMap((net) =>
      Array.from({ length: 256 / size }, (_, i) => `${net}.${i * size}/${prefix}`),
    );
  }
  throw new Error(
    `A test network on a TEST-NET range holds at most 253 containers (a /24); ${containers} asked.`,
  );
}
