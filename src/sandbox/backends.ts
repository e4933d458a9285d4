/**
 * The backend registry: one entry per backend folder. `openSandboxBackend` is the only place that
 * names them; everything above src/sandbox takes the SandboxBackend it returns. The Kubernetes
 * backend is loaded on demand, so that neither this file's types nor a Docker-only process load
 * @kubernetes/client-node (an optional package).
 */
import type { BackendOptions, KubernetesBackendConfig, SandboxBackend } from "./backend.js";
import type { DockerBackendConfig } from "./docker/backend.js";

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
