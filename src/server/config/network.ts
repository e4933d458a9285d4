/**
 * Network egress in `warden serve`: a tenant's `network:` bound in the server config (the domains
 * its sessions may ask for, with allow / ask / deny entries as in a policy file, plus the egress
 * networks and CA bundle its gateways use), a session's own request (`network.allow` entries in
 * POST /v1/sessions), and the session's NetworkOptions: the request, bounded by the tenant and by
 * the `network:` sections of the tenant's policy files, strictest wins. Without a request a
 * session has no network; a request beyond the bound is a 400 naming the entry. Each connection
 * is one audit line (`kind: "network"`), within the server's `networkAuditLimit` per session (the
 * others are summed up in `kind: "network-dropped"` lines), and counts in
 * `warden_egress_connections_total`.
 */
import { resolve } from "node:path";
import { type Static, Type } from "typebox";
import {
  type AuditDropSummary,
  type AuditLimit,
  type ConnectionAudit,
  type NetworkOptions,
  type NetworkRule,
  parseHostEntry,
  type SecretUseAudit,
} from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import {
  type ApprovalProvider,
  effectiveNetworkRules,
  loadPolicy,
  networkApprover,
  networkSectionRules,
} from "../../policy/index.js";
import type { ServerAuditLog } from "../audit.js";

const Entries = Type.Array(Type.String({ minLength: 1 }), { description: "host[:port[+port]] entries" });

/** A tenant's `network:` key in the server config. */
export const TenantNetworkSchema = Type.Object(
  {
    allow: Type.Optional(Entries),
    ask: Type.Optional(Entries),
    deny: Type.Optional(Entries),
    egressNetworks: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    caBundle: Type.Optional(
      Type.String({
        minLength: 1,
        description: "PEM file of extra CAs the egress gateway trusts for origins, besides the system's",
      }),
    ),
  },
  { additionalProperties: false, description: "What the tenant's sessions may reach (docs/network.md)" },
);
export type TenantNetworkInput = Static<typeof TenantNetworkSchema>;

/** The resolved bound. */
export interface TenantNetwork {
  rules: NetworkRule[];
  egressNetworks?: string[];
  caBundlePath?: string;
}

/** Resolves a tenant's `network:`; throws InvalidArgumentError naming `where` and the bad entry. */
export function resolveTenantNetwork(
  input: TenantNetworkInput,
  baseDir: string,
  where: string,
): TenantNetwork {
  const { rules, errors } = networkSectionRules(input);
  if (errors[0]) throw new InvalidArgumentError(`${where}/${errors[0].text}`);
  return {
    rules,
    ...(input.egressNetworks ? { egressNetworks: input.egressNetworks } : {}),
    ...(input.caBundle ? { caBundlePath: resolve(baseDir, input.caBundle) } : {}),
  };
}

/**
 * The NetworkOptions of a session that asked for `requested` (allow entries), or undefined (no
 * network) when it asked for none. Throws InvalidArgumentError when the tenant has no bound or an
 * entry (host and port) is not within it.
 */
export function sessionNetwork(input: {
  tenantId: string;
  bound: TenantNetwork | undefined;
  policyLayers: NetworkRule[][];
  requested: string[] | undefined;
  onConnection: (record: ConnectionAudit) => void;
  onAuditDropped?: (summary: AuditDropSummary) => void;
  onSecretUse?: (record: SecretUseAudit) => void;
  auditLimit?: AuditLimit;
}): NetworkOptions | undefined {
  if (!input.requested?.length) return undefined;
  if (!input.bound)
    throw new InvalidArgumentError(
      `tenant '${input.tenantId}' has no network allowlist in the server config (tenants[].network), so its sessions get no network.`,
    );
  const requested = input.requested.map((e, i) => parseHostEntry(e, "allow", `network.allow[${i}]`));
  for (const [i, r] of requested.entries()) {
    for (const port of r.ports) {
      if (!withinBound(input.bound.rules, r.host, port))
        throw new InvalidArgumentError(
          `network.allow[${i}] ${r.host}:${port} is not within the network allowlist of tenant '${input.tenantId}'; ask only for hosts and ports it allows, or have the operator add it to the tenant's network.allow in the server config.`,
        );
    }
  }
  return {
    mode: "allowlist",
    rules: effectiveNetworkRules([...input.policyLayers, input.bound.rules, requested]),
    ...(input.bound.egressNetworks ? { egressNetworks: input.bound.egressNetworks } : {}),
    ...(input.bound.caBundlePath ? { caBundlePath: input.bound.caBundlePath } : {}),
    onConnection: input.onConnection,
    ...(input.onAuditDropped ? { onAuditDropped: input.onAuditDropped } : {}),
    ...(input.onSecretUse ? { onSecretUse: input.onSecretUse } : {}),
    ...(input.auditLimit ? { auditLimit: input.auditLimit } : {}),
  };
}

/** Where a session's egress audit records go, and their bound (NetworkOptions' fields of the same names). */
export interface NetworkAuditHooks {
  onConnection(record: ConnectionAudit): void;
  /** One `kind: "secret"` line per request that carried a placeholder (used or refused). */
  onSecretUse(record: SecretUseAudit): void;
  onAuditDropped(summary: AuditDropSummary): void;
  auditLimit: AuditLimit;
}

/**
 * The audit hooks of session `session` of `tenant`: one `kind: "network"` line per record within
 * `auditLimit`, one `kind: "network-dropped"` line per summary of the others; `count` gets every
 * record's decision either way (the connections counter stays exact).
 */
export function networkAuditHooks(
  log: ServerAuditLog,
  count: (decision: string, n: number) => void,
  tenant: string,
  session: string,
  auditLimit: AuditLimit,
): NetworkAuditHooks {
  return {
    onConnection: ({ sessionId: _id, ...record }) => {
      count(record.decision, 1);
      log.write({ kind: "network", tenant, session, ...record });
    },
    onSecretUse: ({ sessionId: _id, ...record }) => log.write({ kind: "secret", tenant, session, ...record }),
    onAuditDropped: ({ sessionId: _id, ...summary }) => {
      // The connections counter counts connections; secret-use records (use, refuse) are not.
      for (const [decision, n] of Object.entries(summary.decisions))
        if (decision !== "use" && decision !== "refuse") count(decision, n);
      log.write({ kind: "network-dropped", tenant, session, ...summary });
    },
    auditLimit,
  };
}

/** A requested pattern is within the bound when the bound allows or asks for all of it. */
function withinBound(bound: readonly NetworkRule[], host: string, port: number): boolean {
  return effectiveNetworkRules([bound, [{ host, ports: [port], decision: "allow" }]]).some(
    (r) => r.decision !== "deny" && r.host === host && r.ports.includes(port),
  );
}

/**
 * The NetworkOptions of a new session of `tenant` (sessionNetwork), the `network:` sections of the
 * tenant's policy files included, its audit records going to `audit`; undefined without a request. With an allowlist, `ask`
 * connections go to `ask.provider` as the tenant's (networkApprover) and wait at most
 * `ask.timeoutMs`. Errors as sessionNetwork.
 */
export async function tenantSessionNetwork(
  tenant: { id: string; network?: TenantNetwork; policy: readonly string[] },
  requested: string[] | undefined,
  audit: NetworkAuditHooks,
  ask?: { provider: ApprovalProvider; timeoutMs: number },
): Promise<NetworkOptions | undefined> {
  const policyLayers = requested?.length ? await tenantPolicyNetwork(tenant.policy) : [];
  const network = sessionNetwork({
    tenantId: tenant.id,
    bound: tenant.network,
    policyLayers,
    requested,
    ...audit,
  });
  if (network?.mode !== "allowlist" || !ask) return network;
  const approve = networkApprover(ask.provider, { tenant: tenant.id, owner: tenant.id });
  return { ...network, ...(approve ? { approve } : {}), approvalTimeoutMs: ask.timeoutMs };
}

const policyNetworks = new Map<string, Promise<NetworkRule[][]>>();

/** The `network:` sections of a tenant's policy files (loaded once per list of files). */
function tenantPolicyNetwork(files: readonly string[]): Promise<NetworkRule[][]> {
  if (files.length === 0) return Promise.resolve([]);
  const key = JSON.stringify(files);
  let layers = policyNetworks.get(key);
  if (!layers) {
    layers = loadPolicy([...files]).then((p) => p.layers.flatMap((l) => (l.network ? [l.network] : [])));
    policyNetworks.set(key, layers);
  }
  return layers;
}
