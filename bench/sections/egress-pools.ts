/**
 * How many more networks the Docker engine can make from its address pools: every session with
 * network egress takes one (src/egress/gateway-container.ts), and the pools are shared with
 * everything else on the engine, so the scale phase asks for no more than are free.
 */
import { networkInterfaces } from "node:os";
import type Docker from "dockerode";

/** One address pool: networks of prefix length `Size` cut from `Base` (Docker's DefaultAddressPools entry). */
export interface AddressPool {
  Base: string;
  Size: number;
}

/**
 * The pools of an engine whose configuration names none (Docker 20.10+ libnetwork's defaults):
 * 172.17.0.0/16 … 172.31.0.0/16 as /16s, and 192.168.0.0/16 cut in /20s, 31 networks in all.
 */
export const DEFAULT_ADDRESS_POOLS: readonly AddressPool[] = [
  ...Array.from({ length: 15 }, (_, i) => ({ Base: `172.${17 + i}.0.0/16`, Size: 16 })),
  { Base: "192.168.0.0/16", Size: 20 },
];

/** IPv4 `a.b.c.d/n` → its first and last address as unsigned integers; undefined for anything else. */
function range(cidr: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (!m) return undefined;
  const ip = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const size = 2 ** (32 - Number(m[5]));
  const first = ip - (ip % size);
  return [first, first + size - 1];
}

/**
 * The network slots `pools` hold (`total`) and those no CIDR of `used` (IPv4 subnets and /32
 * addresses; others are ignored) overlaps (`free`).
 */
export function freePoolSlots(
  pools: readonly AddressPool[],
  used: readonly string[],
): { total: number; free: number } {
  const taken = used.flatMap((c) => {
    const r = range(c);
    return r ? [r] : [];
  });
  let total = 0;
  let free = 0;
  for (const p of pools) {
    const base = range(p.Base);
    if (!base) continue;
    const step = 2 ** (32 - p.Size);
    for (let s = base[0]; s <= base[1]; s += step) {
      total++;
      if (!taken.some(([a, b]) => a <= s + step - 1 && b >= s)) free++;
    }
  }
  return { total, free };
}

/**
 * The engine's free network slots now: its DefaultAddressPools (`docker info`) or
 * DEFAULT_ADDRESS_POOLS, less those its networks' subnets or the host's IPv4 addresses overlap.
 */
export async function freeAddressPools(docker: Docker): Promise<{ total: number; free: number }> {
  const info = (await docker.info()) as { DefaultAddressPools?: AddressPool[] | null };
  const pools = info.DefaultAddressPools?.length ? info.DefaultAddressPools : DEFAULT_ADDRESS_POOLS;
  const used: string[] = [];
  for (const n of await docker.listNetworks())
    for (const c of n.IPAM?.Config ?? []) if (c.Subnet) used.push(c.Subnet);
  for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === "IPv4") used.push(`${a.address}/32`);
  return freePoolSlots(pools, used);
}

/**
 * Containers an IPv4 bridge network of `subnet` can still take with `attached` on it: its
 * addresses less the network's, the broadcast and the bridge's own, less those attached.
 */
export function freeNetworkAddresses(subnet: string, attached: number): number {
  const r = range(subnet);
  return r ? Math.max(0, r[1] - r[0] + 1 - 3 - attached) : 0;
}

/**
 * How many more containers (a gateway each) the engine network `name` can take: its first IPv4
 * subnet's free addresses (freeNetworkAddresses).
 */
export async function networkRoom(docker: Docker, name: string): Promise<number> {
  const n = await docker.getNetwork(name).inspect();
  const subnet = (n.IPAM?.Config ?? []).flatMap((c) => (c.Subnet && range(c.Subnet) ? [c.Subnet] : []))[0];
  return subnet ? freeNetworkAddresses(subnet, Object.keys(n.Containers ?? {}).length) : 0;
}
