/**
 * The gateway's configuration, generated from a session's rules (pure): the JSON that
 * images/gateway (warden-gateway, Go) reads from WARDEN_GATEWAY_CONFIG (base64), see its config.go.
 * The gateway lets through only what it says:
 * - Clients: the session's internal network only (`clientCidrs`).
 * - Destinations: by name, never an IP literal; among the rules whose host pattern matches, the
 *   strictest decision wins (deny > ask > allow; a deny names a domain whatever the port), as
 *   decideConnection (host-pattern.ts); nothing listed is refused without being resolved. A name
 *   is resolved by the gateway each time it connects, and refused when any address is in
 *   `refusedCidrs` (REFUSED_RANGES plus the host's own): the address actually connected to is the
 *   one checked, so a name whose records change (DNS rebinding) is judged by the address used.
 * - Ask: a connection under an ask rule waits on the controller (ask-relay.ts) up to
 *   `askDeadlineMs`.
 * - Secrets: `secretHeaders` are the headers whose placeholders the controller replaces
 *   (secret-relay.ts); empty: no secrets.
 * - Origins' TLS: verified against the system's CAs plus `upstreamCa` (the operator's extra CAs).
 */
import type { NetworkRule } from "./types.js";

/** Inputs of the generated config. */
export interface GatewayConfigInput {
  rules: readonly NetworkRule[];
  /** CIDRs the gateway must never connect to (REFUSED_RANGES plus the host's addresses). */
  refusedCidrs: readonly string[];
  /** CIDRs allowed to use the proxy: the session's internal network. */
  clientCidrs: readonly string[];
  /** TCP port the gateway listens on. */
  port: number;
  /** PEM of the operator's extra CAs for origins (network.caBundlePath), if any. */
  upstreamCa?: string;
  /** Lower-case header names whose placeholders the controller replaces (secretHeaderNames); empty or absent: no secrets. */
  secretHeaders?: readonly string[];
  /** How long the gateway waits for an ask answer before refusing (ms): the approval timeout plus a margin. */
  askDeadlineMs: number;
}

/** The JSON the gateway reads (field names as images/gateway/config.go). */
export interface GatewayConfig {
  port: number;
  rules: Array<{ host: string; ports: number[]; decision: NetworkRule["decision"] }>;
  refusedCidrs: string[];
  clientCidrs: string[];
  secretHeaders: string[];
  upstreamCa: string;
  askDeadlineMs: number;
}

/** The gateway's config for one session. */
export function gatewayConfig(input: GatewayConfigInput): GatewayConfig {
  return {
    port: input.port,
    rules: input.rules.map((r) => ({ host: r.host, ports: [...r.ports], decision: r.decision })),
    refusedCidrs: [...input.refusedCidrs],
    clientCidrs: [...input.clientCidrs],
    secretHeaders: [...(input.secretHeaders ?? [])],
    upstreamCa: input.upstreamCa ?? "",
    askDeadlineMs: input.askDeadlineMs,
  };
}
