/**
 * Validation of SandboxOptions.network (the library's entry; policy files and `--allow-net`
 * produce the same shape). Each bad value is an InvalidArgumentError naming the field.
 */

import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { isIP } from "node:net";
import { isAbsolute, resolve } from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { hostProblem, urlProblem } from "./host-pattern.js";
import { publicSuffixProblem } from "./public-suffix.js";
import { checkSessionSecrets } from "./secret-decision.js";
import type { NetworkOptions, NetworkRule } from "./types.js";

const DECISIONS = new Set(["allow", "ask", "deny"]);
const NETWORK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/**
 * The largest caBundlePath warden accepts: it reaches the gateway base64-encoded in one
 * environment variable, which Linux caps at 128 KiB (MAX_ARG_STRLEN).
 */
const MAX_CA_BUNDLE_BYTES = 64 * 1024;

/** The options with defaults (`none`) and an absolute CA bundle path. Rejects InvalidArgumentError. */
export async function resolveNetworkOptions(network: NetworkOptions | undefined): Promise<NetworkOptions> {
  if (network === undefined) return { mode: "none" };
  if (network.mode === "none") return { mode: "none" };
  if (network.mode !== "allowlist")
    throw new InvalidArgumentError(
      `network.mode must be "none" or "allowlist", got ${JSON.stringify((network as { mode: unknown }).mode)}.`,
    );
  if (!Array.isArray(network.rules))
    throw new InvalidArgumentError("network.rules must be an array of { host, ports, decision }.");
  network.rules.forEach(checkRule);
  for (const [i, n] of (network.egressNetworks ?? []).entries())
    if (typeof n !== "string" || !NETWORK_NAME.test(n))
      throw new InvalidArgumentError({
        field: `network.egressNetworks[${i}]`,
        problem: `must be an engine network name, got ${JSON.stringify(n)}.`,
      });
  const limit = network.auditLimit;
  if (
    limit !== undefined &&
    !(
      Number.isFinite(limit.recordsPerSecond) &&
      limit.recordsPerSecond > 0 &&
      Number.isInteger(limit.burst) &&
      limit.burst >= 1
    )
  )
    throw new InvalidArgumentError(
      `network.auditLimit must be { recordsPerSecond: a number > 0, burst: an integer >= 1 }, got ${JSON.stringify(limit)}.`,
    );
  const out = { ...network };
  if (network.secrets !== undefined) {
    if (!Array.isArray(network.secrets))
      throw new InvalidArgumentError("network.secrets must be an array of { name, bindings, value }.");
    out.secrets = checkSessionSecrets(network.secrets);
  }
  delete out.caBundleSha256;
  if (network.caBundlePath !== undefined) {
    const bundle = checkCaBundle(network.caBundlePath);
    out.caBundlePath = bundle.path;
    out.caBundleSha256 = bundle.sha256;
  }
  checkResolvers(network.resolvers);
  return out;
}

/**
 * network.caBundlePath: a regular file of PEM certificates, at most MAX_CA_BUNDLE_BYTES, no key;
 * returns its absolute path and its content's SHA-256 (hex). Read synchronously, opened once
 * (O_NONBLOCK: a FIFO is refused, not waited on) and checked on that descriptor: each claim of a
 * networked session checks it again, and the thread pool's round trips (stat, read) cost ~0.25 ms
 * against ~0.01 ms.
 */
function checkCaBundle(path: string): { path: string; sha256: string } {
  const abs = isAbsolute(path) ? path : resolve(path);
  const refuse = (problem: string) => new InvalidArgumentError({ field: "network.caBundlePath", problem });
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    throw refuse(`${abs} is not a file; pass a PEM file of CA certificates.`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refuse(`${abs} is not a file; pass a PEM file of CA certificates.`);
    if (st.size > MAX_CA_BUNDLE_BYTES)
      throw refuse(
        `${abs} has ${st.size} bytes, more than ${MAX_CA_BUNDLE_BYTES}; pass only the CAs the system's do not include (the gateway trusts the system's CAs already).`,
      );
    const buf = Buffer.alloc(st.size);
    const text = buf.subarray(0, readSync(fd, buf, 0, st.size, 0)).toString("utf8");
    if (!text.includes("-----BEGIN CERTIFICATE-----") || text.includes("PRIVATE KEY"))
      throw refuse(
        `${abs} must hold PEM CA certificates ("-----BEGIN CERTIFICATE-----") and no private key.`,
      );
    return { path: abs, sha256: createHash("sha256").update(text).digest("hex") };
  } finally {
    closeSync(fd);
  }
}

/** network.resolvers: IPv4 addresses (Docker's `HostConfig.Dns` takes addresses, not names). */
function checkResolvers(resolvers: unknown): void {
  if (resolvers === undefined) return;
  if (!Array.isArray(resolvers))
    throw new InvalidArgumentError({
      field: "network.resolvers",
      problem: "must be a list of IPv4 addresses.",
    });
  for (const [i, r] of resolvers.entries())
    if (typeof r !== "string" || isIP(r) !== 4)
      throw new InvalidArgumentError({
        field: `network.resolvers[${i}]`,
        problem: `${JSON.stringify(r)} is not an IPv4 address; name a DNS server by its address, e.g. 10.0.0.53.`,
      });
}

function checkRule(rule: NetworkRule, i: number): void {
  const field = `network.rules[${i}]`;
  if (typeof rule?.host !== "string") throw new InvalidArgumentError(`${field}.host must be a domain name.`);
  const url = urlProblem(rule.host.toLowerCase());
  if (url) throw new InvalidArgumentError(`${field}.host ${JSON.stringify(rule.host)}: ${url}.`);
  const problem = hostProblem(rule.host);
  if (problem || rule.host !== rule.host.toLowerCase())
    throw new InvalidArgumentError(
      `${field}.host ${JSON.stringify(rule.host)} must be ${problem ?? "lower case"}.`,
    );
  if (
    !Array.isArray(rule.ports) ||
    rule.ports.length === 0 ||
    rule.ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)
  )
    throw new InvalidArgumentError(`${field}.ports must be a non-empty list of TCP ports (1..65535).`);
  if (!DECISIONS.has(rule.decision))
    throw new InvalidArgumentError(`${field}.decision must be "allow", "ask" or "deny".`);
  const suffix = publicSuffixProblem(rule.host, rule.decision);
  if (suffix) throw new InvalidArgumentError(`${field}.host: ${suffix}.`);
}
