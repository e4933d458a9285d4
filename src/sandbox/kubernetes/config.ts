/**
 * The Kubernetes part of `warden serve`'s `backend:` config section (docs/kubernetes.md): the
 * fields' schema and their resolution, and what a tenant may ask for on this backend. Pure: it
 * loads no @kubernetes/client-node (the modules it imports name its types only), so the
 * engine-neutral registry (../backends.ts) can import it into a Docker-only process.
 */
import { resolve } from "node:path";
import { Type } from "typebox";
import { InvalidArgumentError } from "../../errors.js";
import type { KubernetesBackendConfig } from "../backend.js";
import { HEARTBEAT_MS_RANGE } from "./cluster.js";
import { isLabelValue } from "./pod-labels.js";
import { REQUEST_TIMEOUT_MS_RANGE } from "./request-deadline.js";
import { checkTenantNamespaces } from "./tenant-namespaces.js";

/** The schema properties of the `backend:` fields of kind kubernetes (each optional there). */
export const KUBERNETES_CONFIG_PROPERTIES = {
  namespace: Type.Optional(
    Type.String({ minLength: 1, description: "Namespace of the session Pods (kubernetes)" }),
  ),
  runtimeClassName: Type.Optional(
    Type.String({ minLength: 1, description: "RuntimeClass of the Pods, e.g. gvisor (kubernetes)" }),
  ),
  kubeconfig: Type.Optional(
    Type.String({ minLength: 1, description: "kubeconfig file; default $KUBECONFIG or ~/.kube/config" }),
  ),
  imagePullPolicy: Type.Optional(
    Type.Union([Type.Literal("Always"), Type.Literal("IfNotPresent"), Type.Literal("Never")]),
  ),
  startTimeoutMs: Type.Optional(
    Type.Integer({ minimum: 1000, description: "How long a new Pod may take to run, ms; default 120000" }),
  ),
  heartbeatMs: Type.Optional(
    Type.Integer({
      minimum: HEARTBEAT_MS_RANGE.min,
      maximum: HEARTBEAT_MS_RANGE.max,
      description:
        "Ping an idle session's helper after this long without traffic on its exec stream, ms, so the node's streaming idle timeout never closes it; default 60000",
    }),
  ),
  requestTimeoutMs: Type.Optional(
    Type.Integer({
      minimum: REQUEST_TIMEOUT_MS_RANGE.min,
      maximum: REQUEST_TIMEOUT_MS_RANGE.max,
      description:
        "How long each Kubernetes API request, and the opening of a pods/exec stream, may take before it fails, ms (an open stream has no limit); default 30000",
    }),
  ),
  replicaId: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "This replica's identity among servers sharing the namespace (a label value on its Pods); default: host name and state directory digest",
    }),
  ),
  tenantNamespaces: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        "Tenant id to the namespace of its Pods (created and RBAC'd by the cluster admin; warden never creates one); tenants not listed use namespace",
    }),
  ),
};

/**
 * The fields of kind kubernetes in the order a stray one under kind docker is named (the first
 * present wins).
 */
export const KUBERNETES_ONLY = [
  "namespace",
  "runtimeClassName",
  "kubeconfig",
  "imagePullPolicy",
  "startTimeoutMs",
  "replicaId",
  "tenantNamespaces",
  "heartbeatMs",
  "requestTimeoutMs",
] as const;

/** The fields of a `backend:` section of kind kubernetes, as the schema checked them (KUBERNETES_CONFIG_PROPERTIES). */
export interface KubernetesConfigInput {
  namespace?: string;
  runtimeClassName?: string;
  kubeconfig?: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  startTimeoutMs?: number;
  heartbeatMs?: number;
  requestTimeoutMs?: number;
  replicaId?: string;
  tenantNamespaces?: Record<string, string>;
}

/** Kind kubernetes resolved: KubernetesBackendConfig without what the process adds when it opens it. */
export type ResolvedKubernetesConfig = Omit<KubernetesBackendConfig, "leaseHolder" | "onChannelEvent">;

/** Where a config section sits and what it is resolved against (../backends.ts resolveBackendConfig). */
export interface BackendConfigContext {
  /** The config file's directory: a relative kubeconfig is resolved against it. */
  baseDir: string;
  /** Prefix of error messages: the config file (`serve.yaml`). */
  where: string;
  /** The configured tenant ids (tenantNamespaces may map only these). */
  tenants: readonly string[];
  /** The replica id when the section names none (warden serve: its host and state directory). */
  defaultReplicaId: () => string;
}

/**
 * Resolves `input` (kubeconfig absolute, replicaId defaulted). Throws InvalidArgumentError naming
 * the field: no namespace, a replicaId that is no Kubernetes label value, a tenantNamespaces entry
 * of no tenant or with no namespace name (checkTenantNamespaces).
 */
export function resolveKubernetesConfig(
  input: KubernetesConfigInput,
  context: BackendConfigContext,
): ResolvedKubernetesConfig {
  const { baseDir, where, tenants } = context;
  if (!input.namespace)
    throw new InvalidArgumentError(
      `${where}/backend: kind kubernetes needs a namespace (the one its session Pods go to), e.g. namespace: warden.`,
    );
  return {
    kind: "kubernetes",
    namespace: input.namespace,
    ...(input.runtimeClassName ? { runtimeClassName: input.runtimeClassName } : {}),
    ...(input.kubeconfig ? { kubeconfig: resolve(baseDir, input.kubeconfig) } : {}),
    ...(input.imagePullPolicy ? { imagePullPolicy: input.imagePullPolicy } : {}),
    ...(input.startTimeoutMs ? { startTimeoutMs: input.startTimeoutMs } : {}),
    ...(input.heartbeatMs !== undefined ? { heartbeatMs: input.heartbeatMs } : {}),
    ...(input.requestTimeoutMs !== undefined ? { requestTimeoutMs: input.requestTimeoutMs } : {}),
    replicaId:
      input.replicaId === undefined ? context.defaultReplicaId() : checkReplicaId(input.replicaId, where),
    ...(input.tenantNamespaces && Object.keys(input.tenantNamespaces).length > 0
      ? { tenantNamespaces: checkTenantNamespaces(input.tenantNamespaces, tenants, where) }
      : {}),
  };
}

/** `id` when it can label a Pod; else InvalidArgumentError naming the field and the fix. */
function checkReplicaId(id: string, where: string): string {
  if (isLabelValue(id)) return id;
  throw new InvalidArgumentError(
    `${where}/backend/replicaId ${JSON.stringify(id)} cannot label a Kubernetes Pod (at most 63 of A-Z a-z 0-9 _ . -, starting and ending with a letter or digit); use e.g. the StatefulSet Pod's name (warden-0), the same on every restart of this replica and different from every other replica's.`,
  );
}

/** What a tenant of the config file asked for that the backend check reads. */
export interface TenantBackendInput {
  id: string;
  workspaceModes?: string[];
  network?: unknown;
}

/**
 * The workspace modes a tenant gets on Kubernetes: copy only. Throws InvalidArgumentError naming
 * the tenant (`where`) for what a Pod cannot do: a tenant id that is no label value, ro/rw
 * workspaces (a node has no host directory to bind), a network bound (the egress gateway is Docker's).
 */
export function kubernetesWorkspaceModes<M extends string>(
  tenant: TenantBackendInput,
  resolved: M[],
  where: string,
): M[] {
  if (!isLabelValue(tenant.id))
    throw new InvalidArgumentError(
      `${where}/id '${tenant.id}' cannot label a Kubernetes Pod (it must end with a letter or digit); rename the tenant.`,
    );
  const bound = (tenant.workspaceModes ?? []).filter((m) => m !== "copy");
  if (bound.length > 0)
    throw new InvalidArgumentError(
      `${where}/workspaceModes: ${bound.join(", ")} bind-mount a host directory, which the Kubernetes backend cannot; use [copy].`,
    );
  if (tenant.network !== undefined)
    throw new InvalidArgumentError(
      `${where}/network: network egress is not available on the Kubernetes backend yet; remove it (sessions have no network).`,
    );
  return resolved.filter((m) => m === "copy");
}
