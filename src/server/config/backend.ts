/**
 * Where `warden serve` runs its sessions: `backend: { kind: docker }` (default: containers on the
 * local Docker engine) or `backend: { kind: kubernetes, namespace, runtimeClassName?, kubeconfig?,
 * imagePullPolicy?, startTimeoutMs?, replicaId?, tenantNamespaces?, heartbeatMs?, requestTimeoutMs? }` (one hardened Pod per
 * session, src/sandbox/kubernetes; `tenantNamespaces` gives a tenant its own namespace, tenant-namespaces.ts).
 * `replicaId` is the server's identity among several replicas sharing a namespace
 * (docs/scale-out.md): a Kubernetes label value, default defaultReplicaId (host name and state directory).
 * On Kubernetes a tenant id becomes a label value (so it must end with a letter or digit), and a
 * tenant may use copy-mode workspaces only, without network egress: a cluster node has no host
 * directory to bind, and the egress gateway is Docker's. Each is refused at load, naming the fix.
 */
import { resolve } from "node:path";
import { type Static, Type } from "typebox";
import { InvalidArgumentError } from "../../errors.js";
import {
  checkTenantNamespaces,
  HEARTBEAT_MS_RANGE,
  isLabelValue,
  REQUEST_TIMEOUT_MS_RANGE,
  type TenantNamespaces,
} from "../../sandbox/kubernetes/index.js";
import { defaultReplicaId } from "./controller-id.js";

/** The `backend:` key of the server config. */
export const BackendConfigSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal("docker"), Type.Literal("kubernetes")], {
      description: "docker (default) or kubernetes",
    }),
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
  },
  { additionalProperties: false },
);
export type BackendConfigInput = Static<typeof BackendConfigSchema>;

/** The resolved backend: Docker, or the cluster's coordinates (kubeconfig absolute). */
export type BackendConfig =
  | { kind: "docker" }
  | {
      kind: "kubernetes";
      namespace: string;
      runtimeClassName?: string;
      kubeconfig?: string;
      imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
      startTimeoutMs?: number;
      /** Heartbeat of idle sessions' exec streams, ms (src/sandbox/kubernetes/pod-channel.ts). */
      heartbeatMs?: number;
      /** Deadline of each API request, ms (src/sandbox/kubernetes/request-deadline.ts); absent: 30 s. */
      requestTimeoutMs?: number;
      /** This server's `io.warden.replica` label value (always set once resolved). */
      replicaId: string;
      /** Tenants with a namespace of their own (tenant-namespaces.ts); absent: all in `namespace`. */
      tenantNamespaces?: TenantNamespaces;
    };

const KUBERNETES_ONLY = [
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

/**
 * Resolves `backend:` (absent: Docker); `stateDir` (absolute) gives the default replica id,
 * `tenants` the configured tenant ids. Throws InvalidArgumentError naming the field: a
 * Kubernetes-only field with kind docker, kind kubernetes without a namespace, a replicaId that is
 * no Kubernetes label value, a tenantNamespaces entry of no tenant or with no namespace name.
 */
export function resolveBackendConfig(
  input: BackendConfigInput | undefined,
  baseDir: string,
  where: string,
  stateDir: string,
  tenants: readonly string[] = [],
): BackendConfig {
  if (!input || input.kind === "docker") {
    const stray = KUBERNETES_ONLY.find((k) => input?.[k] !== undefined);
    if (stray)
      throw new InvalidArgumentError(
        `${where}/backend/${stray} applies to kind kubernetes only; remove it or set kind: kubernetes.`,
      );
    return { kind: "docker" };
  }
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
      input.replicaId === undefined ? defaultReplicaId(stateDir) : checkReplicaId(input.replicaId, where),
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
interface TenantBackendInput {
  id: string;
  workspaceModes?: string[];
  network?: unknown;
}

/**
 * The workspace modes a tenant gets on `backend`: as configured on Docker (default copy and ro),
 * copy only on Kubernetes. Throws InvalidArgumentError naming the tenant for what Kubernetes
 * cannot do: a tenant id that is no label value, ro/rw workspaces, a network bound.
 */
export function backendWorkspaceModes<M extends string>(
  backend: BackendConfig,
  tenant: TenantBackendInput,
  resolved: M[],
  where: string,
): M[] {
  if (backend.kind === "docker") return resolved;
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
