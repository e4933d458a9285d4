/**
 * The backend registry: one entry per backend folder. `openSandboxBackend` is the only place that
 * names them; everything above src/sandbox takes the SandboxBackend it returns. The Kubernetes
 * backend is loaded on demand, so that neither this file's types nor a Docker-only process load
 * @kubernetes/client-node (an optional package); its config check (kubernetes/config.ts) is
 * loaded with this file: it is pure and names none of that package's values.
 *
 * `warden serve`'s `backend:` config section is checked here too (BackendConfigSchema,
 * resolveBackendConfig, backendWorkspaceModes), each backend's fields by its own folder, so that
 * the server names no backend's settings.
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError } from "../errors.js";
import type { BackendOptions, KubernetesBackendConfig, SandboxBackend } from "./backend.js";
import type { DockerBackendConfig } from "./docker/backend.js";
import {
  type BackendConfigContext,
  KUBERNETES_CONFIG_PROPERTIES,
  KUBERNETES_ONLY,
  kubernetesWorkspaceModes,
  type ResolvedKubernetesConfig,
  resolveKubernetesConfig,
  type TenantBackendInput,
} from "./kubernetes/config.js";

/** Which backend, and its settings. */
export type BackendConfig = DockerBackendConfig | KubernetesBackendConfig | { kind: "memory" };

/**
 * Opens the backend `config` names, after checking it answers: Docker pings the engine; Kubernetes
 * checks every namespace (it exists, warden's rights hold, it has the deny-all NetworkPolicy) and
 * takes the replica Lease, released by close(). Rejects EngineUnreachableError, NotFoundError,
 * SandboxError or ReplicaIdInUseError naming what is missing.
 */
export async function openSandboxBackend(
  config: BackendConfig,
  options: BackendOptions = {},
): Promise<SandboxBackend> {
  switch (config.kind) {
    case "docker":
      return (await import("./docker/backend.js")).openDockerBackend(config, options);
    case "kubernetes":
      return (await import("./kubernetes/index.js")).openKubernetesBackend(config, options);
    case "memory":
      return (await import("./memory/index.js")).memoryBackend(options);
  }
}

/**
 * The `backend:` key of `warden serve`'s config: `kind: docker` (default: containers on the local
 * Docker engine, no other field) or `kind: kubernetes` with the fields of kubernetes/config.ts
 * (one hardened Pod per session).
 */
export const BackendConfigSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal("docker"), Type.Literal("kubernetes")], {
      description: "docker (default) or kubernetes",
    }),
    ...KUBERNETES_CONFIG_PROPERTIES,
  },
  { additionalProperties: false },
);
type BackendConfigInput = Static<typeof BackendConfigSchema>;

/**
 * The `backend:` section resolved: Docker, or the cluster's coordinates (kubeconfig absolute,
 * replicaId set). What openSandboxBackend takes once the process adds its own parts (the Lease
 * holder, the channel event listener).
 */
export type ResolvedBackendConfig = { kind: "docker" } | ResolvedKubernetesConfig;

/**
 * Resolves `input`, as BackendConfigSchema checked it (absent: Docker). Throws InvalidArgumentError
 * naming the field (`${context.where}/backend/…`): a Kubernetes-only field with kind docker, or
 * what resolveKubernetesConfig refuses (no namespace, a replicaId that is no label value, a
 * tenantNamespaces entry of no tenant or with no namespace name).
 */
export function resolveBackendConfig(
  input: BackendConfigInput | undefined,
  context: BackendConfigContext,
): ResolvedBackendConfig {
  if (!input || input.kind === "docker") {
    const stray = KUBERNETES_ONLY.find((k) => input?.[k] !== undefined);
    if (stray)
      throw new InvalidArgumentError(
        `${context.where}/backend/${stray} applies to kind kubernetes only; remove it or set kind: kubernetes.`,
      );
    return { kind: "docker" };
  }
  return resolveKubernetesConfig(input, context);
}

/**
 * The workspace modes a tenant gets on `backend`: `resolved` (as configured) on Docker, copy only
 * on Kubernetes. Throws InvalidArgumentError naming the tenant (`where`) for what the backend
 * cannot do (kubernetesWorkspaceModes: a tenant id that is no label value, ro/rw workspaces, a
 * network bound).
 */
export function backendWorkspaceModes<M extends string>(
  backend: ResolvedBackendConfig,
  tenant: TenantBackendInput,
  resolved: M[],
  where: string,
): M[] {
  if (backend.kind === "docker") return resolved;
  return kubernetesWorkspaceModes(tenant, resolved, where);
}
