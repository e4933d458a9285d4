/**
 * Namespace per tenant on the Kubernetes backend (issue 18): `backend.tenantNamespaces` maps a
 * tenant id to the namespace its session and warm pool Pods go to; a tenant not listed uses
 * `backend.namespace`. An explicit map rather than a name template: warden never creates a
 * namespace, the cluster's administrator creates each one and binds warden's Role in it, so every
 * namespace warden touches is one somebody wrote down. Pure: no I/O (the start-up checks of the
 * namespaces themselves are tenant-clusters.ts's).
 */
import { InvalidArgumentError } from "../../errors.js";
import { isNamespaceName } from "./cluster.js";

/** Tenant id to namespace, as resolved from the config (only tenants with their own namespace). */
export type TenantNamespaces = Readonly<Record<string, string>>;

/**
 * Checks `input` (`backend.tenantNamespaces` of the config at `where`) against the configured
 * `tenants`; returns it unchanged. Throws InvalidArgumentError naming the field and the tenant: a
 * namespace that is no DNS-1123 label (what Kubernetes takes as a namespace name), or an entry
 * for a tenant the config does not have (a typo would otherwise put that tenant in the main
 * namespace without a word).
 */
export function checkTenantNamespaces(
  input: Record<string, string>,
  tenants: readonly string[],
  where: string,
): TenantNamespaces {
  for (const [tenant, namespace] of Object.entries(input)) {
    const field = `${where}/backend/tenantNamespaces/${tenant}`;
    if (!tenants.includes(tenant))
      throw new InvalidArgumentError(
        `${field}: no tenant '${tenant}' is configured; remove the entry or add the tenant under tenants.`,
      );
    if (!isNamespaceName(namespace))
      throw new InvalidArgumentError(
        `${field} ${JSON.stringify(namespace)} is not a Kubernetes namespace name (at most 63 of a-z 0-9 -, starting and ending with a letter or digit); name the namespace the cluster administrator created for tenant '${tenant}'.`,
      );
  }
  return { ...input };
}

/** The namespace of `tenant`'s Pods: its own when mapped, else `mainNamespace`. */
export function tenantNamespace(
  mainNamespace: string,
  tenantNamespaces: TenantNamespaces | undefined,
  tenant: string,
): string {
  // Own entries only: a tenant named like an Object.prototype member ("constructor") is not listed.
  return tenantNamespaces && Object.hasOwn(tenantNamespaces, tenant)
    ? (tenantNamespaces[tenant] ?? mainNamespace)
    : mainNamespace;
}

/**
 * Every namespace a server uses, each once, `mainNamespace` first (it also holds the replica
 * Leases), then the tenant namespaces in the order of first mention.
 */
export function allNamespaces(
  mainNamespace: string,
  tenantNamespaces: TenantNamespaces | undefined,
): string[] {
  return [...new Set([mainNamespace, ...Object.values(tenantNamespaces ?? {})])];
}

/** The tenants mapped to `namespace` (none for a namespace only the unmapped tenants use). */
export function tenantsIn(namespace: string, tenantNamespaces: TenantNamespaces | undefined): string[] {
  return Object.entries(tenantNamespaces ?? {})
    .filter(([, ns]) => ns === namespace)
    .map(([tenant]) => tenant);
}
