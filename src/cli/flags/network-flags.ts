/**
 * The network flags of `warden exec`, `replay`, `run` and `mcp`: `--allow-net host[:port],…`
 * (allowlist mode through the egress gateway; repeatable), `--net-ca-bundle <pem>` (extra CA
 * certificates the gateway trusts for origins) and `--egress-network <name>` (engine network the gateway leaves through;
 * default bridge). Each connection is reported on stderr as one `warden: net …` line
 * (../output/network-lines.ts).
 */
import type { Command } from "commander";
import { type NetworkOptions, type NetworkRule, parseAllowNet } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { effectiveNetworkRules, type PolicyLayer } from "../../policy/index.js";
import { connectionLine, droppedLine } from "../output/network-lines.js";
import { addSecretFlags, type SecretFlags } from "./secret-flags.js";

/** The parsed network flags (the secret flags among them). */
export interface NetworkFlags extends SecretFlags {
  /** `--allow-net`, one string per occurrence. */
  allowNet?: string[];
  netCaBundle?: string;
  egressNetwork?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the network flags to `command`, then the secret flags (secret-flags.ts). */
export function addNetworkFlags(command: Command): Command {
  const withNetwork = command
    .option(
      "--allow-net <hosts>",
      "let the sandbox reach these domains through warden's egress gateway: host[:port[+port]],… (host names, not URLs: pypi.org, not https://pypi.org; wildcards *.example.org; default ports 80 and 443; repeatable). Without it: no network",
      collect,
    )
    .option(
      "--net-ca-bundle <file>",
      "PEM file of extra CA certificates (at most 64 KiB) the egress gateway trusts for origins, besides the system's",
    )
    .option(
      "--egress-network <name>",
      "engine network the egress gateway leaves through (default bridge; repeatable)",
      collect,
    );
  return addSecretFlags(withNetwork);
}

/** The `network:` sections of loaded policy layers, one rule list per layer that has one. */
export function policyNetworkLayers(layers: readonly PolicyLayer[]): NetworkRule[][] {
  return layers.flatMap((l) => (l.network ? [l.network] : []));
}

/** How errors name those layers: `<file> (<layer>)`, in the same order as policyNetworkLayers. */
export function policyNetworkLayerNames(layers: readonly PolicyLayer[]): string[] {
  return layers.flatMap((l) => (l.network ? [`${l.file} (${l.layer})`] : []));
}

const allowsAny = (rules: readonly NetworkRule[]) => rules.some((r) => r.decision !== "deny");
const hostsOf = (rules: readonly NetworkRule[]) =>
  rules
    .filter((r) => r.decision !== "deny")
    .map((r) => `${r.host}:${r.ports.join("+")}`)
    .join(", ");

/**
 * The error for layers that allow hosts, but no host together: it names each layer with what it
 * allows (`names`: one per layer; `layer <n>` for one without), and the fix.
 */
function noHostError(layers: readonly NetworkRule[][], names: readonly string[]): InvalidArgumentError {
  const each = layers.map(
    (rules, i) => `${names[i] ?? `layer ${i + 1}`} allows ${hostsOf(rules) || "no host"}`,
  );
  return new InvalidArgumentError(
    `The network layers allow no host together: ${each.join("; ")}. A connection must be allowed by every layer (each policy file's network: section and --allow-net); ask for a host every layer allows, or widen the layer that leaves it out.`,
  );
}

/**
 * The session's NetworkOptions, or undefined (mode none) when neither `--allow-net` nor a policy
 * file's `network:` section names a domain. Policy sections and `--allow-net` are layers: a
 * connection gets the strictest of their decisions (effectiveNetworkRules), so `--allow-net`
 * cannot widen what a policy file allows. InvalidArgumentError when the layers allow hosts but
 * none together (naming the layer that leaves the others' hosts out: `layerNames`, one per policy
 * layer, as policyNetworkLayerNames gives them).
 */
export function networkOptionsOf(
  flags: NetworkFlags,
  policyLayers: NetworkRule[][] = [],
  layerNames: readonly string[] = [],
): NetworkOptions | undefined {
  const layers = [...policyLayers];
  if (flags.allowNet?.length) {
    const allowNet = flags.allowNet.flatMap((value) => parseAllowNet(value));
    if (allowNet.length === 0)
      throw new InvalidArgumentError("--allow-net needs at least one host, e.g. --allow-net pypi.org.");
    layers.push(allowNet);
  }
  const rules = effectiveNetworkRules(layers);
  if (!allowsAny(rules)) {
    // Asked for network (some layer allows a host) but the layers leave none: say so, never run offline silently.
    const names = [...layerNames.slice(0, policyLayers.length)];
    if (flags.allowNet?.length) names[layers.length - 1] = "--allow-net";
    if (layers.some(allowsAny)) throw noHostError(layers, names);
    if (flags.netCaBundle || flags.egressNetwork?.length)
      throw new InvalidArgumentError(
        "--net-ca-bundle and --egress-network need --allow-net (or a policy network: section): name the domains to allow.",
      );
    return undefined;
  }
  return {
    mode: "allowlist",
    rules,
    ...(flags.egressNetwork?.length ? { egressNetworks: flags.egressNetwork } : {}),
    ...(flags.netCaBundle ? { caBundlePath: flags.netCaBundle } : {}),
    onConnection: (r) => process.stderr.write(connectionLine(r)),
    onAuditDropped: (s) => process.stderr.write(droppedLine(s)),
  };
}
