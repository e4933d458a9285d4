/**
 * `startEgressGateway`: one session's egress, started before its sandbox. Creates the internal
 * network, writes the gateway's config for the session's rules (gateway-config.ts), starts the
 * gateway on the internal network and the egress networks, waits until it accepts connections,
 * follows its records into one ConnectionAudit per connection, and answers its `ask` and secret
 * questions on its stdin: the attached stdio is the gateway's only line to the controller, no host
 * path. `sandboxNetworkConfig` then puts the sandbox on
 * the internal network only. Fail closed: if the gateway is missing, fails to start or dies later,
 * the sandbox has no route anywhere (the internal network has none), never an open one.
 */
import { readFile } from "node:fs/promises";
import type Docker from "dockerode";
import { InvalidArgumentError, SandboxError } from "../errors.js";
import { throwIfAborted } from "../util/index.js";
import { DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS, GATEWAY_DEADLINE_MARGIN_MS } from "./ask-relay.js";
import { gatewayConfig } from "./gateway-config.js";
import {
  createSessionNetwork,
  egressLabels,
  GATEWAY_IMAGE,
  GATEWAY_PORT,
  gatewayContainerConfig,
  removeEgressResources,
} from "./gateway-container.js";
import { attachGatewayStdio, type GatewayBinding, type GatewayStdio, spareBinding } from "./gateway-stdio.js";
import { hostAddresses, REFUSED_RANGES } from "./refused-addresses.js";
import { placeholderEnv, secretHeaderNames } from "./secret-decision.js";
import { parseSessionCaLine, removeSessionCa, writeSessionCa } from "./session-ca.js";
import type { NetworkOptions } from "./types.js";

/** The allowlist form of NetworkOptions. */
export type AllowlistOptions = Extract<NetworkOptions, { mode: "allowlist" }>;

/** A running gateway. `close` is idempotent; call it after the sandbox container is removed. */
export interface EgressGateway {
  /** The internal network the sandbox joins. */
  networkName: string;
  containerId: string;
  /** The gateway's IPv4 address on the internal network: the sandbox's proxy and DNS server. */
  address: string;
  /** `http://<gateway address>:3128`, the proxy the sandbox's environment names. */
  proxyUrl: string;
  /** Environment variables every command in the sandbox gets (proxy, CA bundle). */
  env: Record<string, string>;
  /** The host file holding the session CA certificate, mounted in the sandbox at CA_BUNDLE_PATH. */
  caBundlePath: string;
  /**
   * Hands the gateway to a session (a warm-pool spare's at claim, GatewayStdio.bind): its questions
   * and records go to `binding` from now on, and `env` is recomputed from its network (same key,
   * so the same rules and secret names; the values and callbacks are the claimer's).
   */
  bind(binding: GatewayBinding): void;
  /** True once the controller's line to the gateway closed (it exited or was removed). */
  readonly closed: boolean;
  close(): Promise<void>;
}

/** Where the session CA certificate (the gateway's, see session-ca.ts) is mounted in the sandbox. */
export const CA_BUNDLE_PATH = "/etc/warden/ca-bundle.pem";

const READY_LINE = /^WARDEN-GATEWAY-READY \d+$/;
const READY_TIMEOUT_MS = 20_000;

/**
 * Starts the gateway of `sessionId`. Rejects SandboxError (naming `warden images build` when the
 * image is missing, or with the gateway's last log lines when it does not start) or AbortError; whatever
 * was created is removed first.
 */
export async function startEgressGateway(
  docker: Docker,
  input: {
    sessionId: string;
    /** The sandbox's labels; the gateway and network get `keepLabels` of them (see egressLabels). */
    labels: Record<string, string>;
    keepLabels: readonly string[];
    network: AllowlistOptions;
    /** A warm-pool spare's gateway: bound to no session (spareBinding) until `bind`. */
    spare?: boolean;
    image?: string;
    signal?: AbortSignal;
  },
): Promise<EgressGateway> {
  const image = input.image ?? GATEWAY_IMAGE;
  try {
    await docker.getImage(image).inspect();
  } catch {
    throw new SandboxError(
      `The egress gateway image '${image}' is not present, so the session gets no network. Build it with 'warden images build'.`,
    );
  }
  let networkName: string | undefined;
  let containerId: string | undefined;
  let detach: (() => void) | undefined;
  try {
    const labelsOf = (role: "gateway" | "network") =>
      egressLabels(input.labels, input.keepLabels, input.sessionId, role);
    const net = await createSessionNetwork(docker, input.sessionId, labelsOf("network"));
    networkName = net.name;
    const egressNetworks = input.network.egressNetworks ?? ["bridge"];
    const refusedCidrs = [
      ...REFUSED_RANGES,
      ...hostAddresses(),
      ...(await egressGateways(docker, egressNetworks)),
    ];
    const upstreamCa = input.network.caBundlePath
      ? await readFile(input.network.caBundlePath, "utf8")
      : undefined;
    throwIfAborted(input.signal);
    const timeoutMs = input.network.approvalTimeoutMs ?? DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS;
    const config = gatewayConfig({
      rules: input.network.rules,
      refusedCidrs: [...new Set(refusedCidrs)],
      clientCidrs: [net.subnet],
      port: GATEWAY_PORT,
      ...(upstreamCa ? { upstreamCa } : {}),
      secretHeaders: secretHeaderNames(input.network.secrets ?? []),
      askDeadlineMs: timeoutMs + GATEWAY_DEADLINE_MARGIN_MS,
    });
    const container = await docker.createContainer(
      gatewayContainerConfig({
        image,
        networkName: net.name,
        config,
        labels: labelsOf("gateway"),
        ...(input.network.resolvers ? { resolvers: input.network.resolvers } : {}),
      }),
    );
    containerId = container.id;
    for (const egress of egressNetworks) await docker.getNetwork(egress).connect({ Container: container.id });
    const startup = startupWatch();
    const binding = input.spare
      ? spareBinding(input.sessionId, input.network)
      : { sessionId: input.sessionId, network: input.network };
    const stdio = await attachGatewayStdio(docker, container, { binding, onCacheLine: startup.onCacheLine });
    detach = stdio.detach;
    await container.start();
    await startup.ready(container);
    const sessionCa = startup.sessionCa();
    if (!sessionCa)
      throw new SandboxError(
        `The egress gateway image '${image}' sent no session CA certificate, so the session gets no network. Rebuild it with 'warden images build'.`,
      );
    const caBundlePath = await writeSessionCa(input.sessionId, sessionCa);
    const info = await container.inspect();
    const address = info.NetworkSettings.Networks[net.name]?.IPAddress;
    if (!address) throw new SandboxError(`the egress gateway has no address on ${net.name}`);
    const proxyUrl = `http://${address}:${GATEWAY_PORT}`;
    const found = { containerId: container.id, networkName: net.name, address, proxyUrl, caBundlePath };
    return egressGatewayOf(found, stdio, input.network, () =>
      removeEgressResources(docker, found.containerId, found.networkName).then(() =>
        removeSessionCa(input.sessionId),
      ),
    );
  } catch (err) {
    detach?.();
    await removeEgressResources(docker, containerId, networkName).catch(() => {});
    await removeSessionCa(input.sessionId).catch(() => {});
    throw err;
  }
}

/**
 * The EgressGateway of a gateway `found` on the engine, whose stdio is attached (`stdio`; none when
 * the gateway is gone: then no variables, nothing to bind, `closed`): `env` follows the bound
 * network, `close` detaches and runs `remove` once. Shared by a started gateway and an adopted one.
 */
export function egressGatewayOf(
  found: Pick<EgressGateway, "networkName" | "containerId" | "address" | "proxyUrl" | "caBundlePath">,
  stdio: GatewayStdio | undefined,
  network: AllowlistOptions,
  remove: () => Promise<void>,
): EgressGateway {
  let removed: Promise<void> | undefined;
  const gateway: EgressGateway = {
    ...found,
    env: stdio ? sandboxEnv(found.proxyUrl, network) : {},
    bind(binding) {
      if (!stdio) return;
      stdio.bind(binding);
      gateway.env = sandboxEnv(found.proxyUrl, binding.network);
    },
    get closed() {
      return stdio?.closed ?? true;
    },
    close() {
      stdio?.detach();
      removed ??= remove();
      return removed;
    },
  };
  return gateway;
}

/**
 * The gateway addresses of the egress networks: the host's side of each bridge, refused too.
 * InvalidArgumentError naming a network the engine does not have.
 */
async function egressGateways(docker: Docker, names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const name of names) {
    const info = (await docker
      .getNetwork(name)
      .inspect()
      .catch((err: { statusCode?: number }) => {
        if (err.statusCode !== 404) throw err;
        throw new InvalidArgumentError(
          `The egress network '${name}' does not exist, so the session gets no network. Create it (docker network create ${name}) or name an existing one in network.egressNetworks (--egress-network).`,
        );
      })) as { IPAM?: { Config?: { Gateway?: string }[] } };
    for (const c of info.IPAM?.Config ?? [])
      if (c.Gateway) out.push(c.Gateway.includes(":") ? `${c.Gateway}/128` : `${c.Gateway}/32`);
  }
  return out;
}

/**
 * Watches the gateway's stderr while it starts: `ready` resolves once it accepts connections
 * (its WARDEN-GATEWAY-READY line), and rejects SandboxError with the last log lines when the gateway exits first or
 * takes over READY_TIMEOUT_MS; `sessionCa` is the session CA certificate the entrypoint sent.
 */
function startupWatch(): {
  onCacheLine(line: string): void;
  ready(container: Docker.Container): Promise<void>;
  sessionCa(): string | undefined;
} {
  const recent: string[] = [];
  let sessionCa: string | undefined;
  let markReady: (() => void) | undefined;
  const readyPromise = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  return {
    sessionCa: () => sessionCa,
    onCacheLine(line) {
      const ca = parseSessionCaLine(line);
      if (ca) {
        sessionCa ??= ca;
        return;
      }
      recent.push(line);
      if (recent.length > 20) recent.shift();
      if (READY_LINE.test(line)) markReady?.();
    },
    ready(container) {
      const exited = container.wait().then((r: { StatusCode: number }) => {
        throw new SandboxError(
          `the egress gateway exited (status ${r.StatusCode}) before accepting connections: ${recent.slice(-5).join(" | ")}`,
        );
      });
      exited.catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new SandboxError(
                `the egress gateway did not start within ${READY_TIMEOUT_MS} ms: ${recent.slice(-5).join(" | ")}`,
              ),
            ),
          READY_TIMEOUT_MS,
        );
      });
      return Promise.race([readyPromise, exited, timeout]).finally(() => clearTimeout(timer));
    },
  };
}

/**
 * The sandbox's proxy and CA bundle variables (the bundle is the session CA, the only issuer the
 * sandbox ever sees), and its secrets' placeholders (`GITHUB_TOKEN={{GITHUB_TOKEN}}`, never a
 * value); NO_PROXY is empty: everything goes to the gateway.
 */
export function sandboxEnv(
  proxyUrl: string,
  network: Pick<AllowlistOptions, "secrets"> = {},
): Record<string, string> {
  const env: Record<string, string> = {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    NO_PROXY: "",
    no_proxy: "",
  };
  for (const name of CA_BUNDLE_VARIABLES) env[name] = CA_BUNDLE_PATH;
  return { ...placeholderEnv(network.secrets ?? []), ...env };
}

/** The variables that point the sandbox's common TLS clients at CA_BUNDLE_PATH. */
const CA_BUNDLE_VARIABLES = [
  "SSL_CERT_FILE",
  "PIP_CERT",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "NODE_EXTRA_CA_CERTS",
] as const;

/**
 * Puts a sandbox's create body on the session's internal network (and nothing else), mounts the
 * session CA certificate read-only at CA_BUNDLE_PATH, and makes the gateway its DNS server:
 * Docker's embedded DNS answers the names of the containers on the network and forwards the
 * others to the gateway, which answers the names the rules list with its own address and every
 * other name NXDOMAIN, forwarding nothing (images/gateway/dns.go).
 */
export function sandboxNetworkConfig(
  config: Docker.ContainerCreateOptions,
  gateway: Pick<EgressGateway, "networkName" | "caBundlePath" | "address">,
): Docker.ContainerCreateOptions {
  const host = config.HostConfig ?? {};
  const mounts = [
    ...(host.Mounts ?? []),
    { Type: "bind" as const, Source: gateway.caBundlePath, Target: CA_BUNDLE_PATH, ReadOnly: true },
  ];
  return {
    ...config,
    NetworkDisabled: false,
    // Short DNS timeouts: the gateway is a hop away and answers at once.
    HostConfig: {
      ...host,
      NetworkMode: gateway.networkName,
      Mounts: mounts,
      Dns: [gateway.address],
      DnsOptions: ["timeout:1", "attempts:1"],
    },
  };
}
