/**
 * Addresses the gateway never connects to, whatever a name resolves to: "this network", loopback,
 * RFC 1918 private, CGNAT (RFC 6598), link-local (with cloud metadata 169.254.169.254), benchmark,
 * IETF-reserved, multicast and reserved IPv4 ranges; IPv6 unspecified, loopback, unique-local
 * (fc00::/7), link-local and multicast; plus the host's own addresses (passed in).
 */
import { networkInterfaces } from "node:os";

/** The fixed refused ranges (CIDR). */
export const REFUSED_RANGES: readonly string[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "ff00::/8",
];

/** This host's own non-loopback interface addresses (os.networkInterfaces), as /32 or /128. */
export function hostAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      // A zone id (fe80::1%eth0) has no place in an ACL; link-local is refused as a range anyway.
      if (a.address.includes("%")) continue;
      out.push(a.family === "IPv6" ? `${a.address}/128` : `${a.address}/32`);
    }
  }
  return [...new Set(out)].sort();
}
