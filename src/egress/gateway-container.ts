/**
 * The Docker side of one session's egress: an `--internal` network (no route out: Docker gives
 * it no gateway to the outside) that holds only the sandbox and its gateway, and the gateway
 * container (images/gateway: warden-gateway) attached to it and to the egress networks. Every resource
 * carries the session's labels, so `warden gc` finds what a crash left behind.
 */
import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import type Docker from "dockerode";
import { SandboxError } from "../errors.js";
import type { GatewayConfig } from "./gateway-config.js";

/** The gateway image `warden images build` builds from images/gateway. */
export const GATEWAY_IMAGE = "warden-gateway:latest";
/** The port the gateway listens on. */
export const GATEWAY_PORT = 3128;
/** Label on gateway containers and session networks (value: "gateway" / "network"). */
export const ROLE_LABEL = "io.warden.egress";
/** The session id on gateway containers and session networks. */
export const SESSION_LABEL = "io.warden.egress.session";

/**
 * The labels of a session's egress resources: the sandbox's tenant, creation, expiry and
 * controller labels (so they expire and are orphaned with it), the role, and the session id under
 * SESSION_LABEL. Never the sandbox's own session or pool labels: nothing that lists sandboxes by
 * those may take a gateway for one.
 */
export function egressLabels(
  sandboxLabels: Record<string, string>,
  keep: readonly string[],
  sessionId: string,
  role: "gateway" | "network",
): Record<string, string> {
  const labels: Record<string, string> = { [ROLE_LABEL]: role, [SESSION_LABEL]: sessionId };
  for (const key of keep) if (sandboxLabels[key] !== undefined) labels[key] = sandboxLabels[key];
  return labels;
}

/** Creates the session's internal network; resolves its name and IPv4 subnet. */
export async function createSessionNetwork(
  docker: Docker,
  sessionId: string,
  labels: Record<string, string>,
): Promise<{ name: string; subnet: string }> {
  // `labels` are egressLabels(…, "network").
  const name = `warden-net-${sessionId.slice(0, 40)}-${randomBytes(4).toString("hex")}`;
  await docker.createNetwork({
    Name: name,
    Driver: "bridge",
    Internal: true,
    CheckDuplicate: true,
    Labels: labels,
    Options: {
      // No address on the host's side of the bridge: the sandbox cannot reach the host's services.
      "com.docker.network.bridge.inhibit_ipv4": "true",
    },
  });
  const info = (await docker.getNetwork(name).inspect()) as {
    IPAM?: { Config?: { Subnet?: string }[] };
  };
  const subnet = info.IPAM?.Config?.find((c) => c.Subnet && !c.Subnet.includes(":"))?.Subnet;
  if (!subnet)
    throw new SandboxError(
      `the egress network ${name} the engine made has no IPv4 subnet; check the engine's default-address-pools (daemon.json) for an IPv4 pool`,
    );
  return { name, subnet };
}

/**
 * The gateway's `createContainer` body: hardened like a sandbox (read-only root, no capabilities,
 * not root). Stdin stays open: the gateway reads the controller's answers from it, and refuses
 * every question once it ends. No log driver (`LogConfig` `none`): the controller reads the
 * gateway's stdio over the attach stream only (gateway-stdio.ts), never the engine's log, and
 * writes its own bounded audit from it; with the engine's default json-file driver every record a
 * sandbox provokes (one per connection) would also land, uncapped, on the engine's disk (attack 37
 * F2: ~6 MB in 40 s). Two CPUs (or the host's one: Docker refuses more CPUs than the host has):
 * opening and re-encrypting TLS is the gateway's work, and one core would cap a session's downloads
 * (issue 40).
 */
export function gatewayContainerConfig(input: {
  image: string;
  networkName: string;
  config: GatewayConfig;
  labels: Record<string, string>;
  /** DNS servers the gateway resolves with (network.resolvers); default the engine's. */
  resolvers?: readonly string[];
  /** The host's CPUs (default os.availableParallelism()). */
  hostCpus?: number;
}): Docker.ContainerCreateOptions {
  return {
    Image: input.image,
    // GOGC 400: fewer collections while bytes stream through (its heap stays far below the limit,
    // which GOMEMLIMIT keeps it under).
    Env: [
      `WARDEN_GATEWAY_CONFIG=${Buffer.from(JSON.stringify(input.config)).toString("base64")}`,
      "GOGC=400",
      "GOMEMLIMIT=192MiB",
    ],
    Labels: input.labels,
    Tty: false,
    OpenStdin: true,
    StdinOnce: false,
    AttachStdin: true,
    HostConfig: {
      NetworkMode: input.networkName,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: 64,
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      NanoCpus: Math.max(1, Math.min(2, input.hostCpus ?? availableParallelism())) * 1e9,
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      LogConfig: { Type: "none", Config: {} },
      // The sandbox's resolver listens on 53 as a user without capabilities (images/gateway/dns.go).
      Sysctls: { "net.ipv4.ip_unprivileged_port_start": "53" },
      ...(input.resolvers?.length ? { Dns: [...input.resolvers] } : {}),
    },
    NetworkingConfig: { EndpointsConfig: { [input.networkName]: { Aliases: ["warden-gateway"] } } },
  };
}

/** Removes a container (force) and then networks; 404/409 are success. */
export async function removeEgressResources(
  docker: Docker,
  containerId: string | undefined,
  networkName: string | undefined,
): Promise<void> {
  const ok = (err: unknown) => {
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw err;
  };
  if (containerId) await docker.getContainer(containerId).remove({ force: true }).catch(ok);
  if (!networkName) return;
  for (let attempt = 0; ; attempt++) {
    try {
      await docker.getNetwork(networkName).remove();
      return;
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 404) return;
      // 403/409: an endpoint is still being torn down.
      if (attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
