/** Placeholder of the Kubernetes SandboxBackend (issue 38, wt-k8s replaces it). */
import { SandboxError } from "../../errors.js";
import type { BackendOptions, KubernetesBackendConfig, SandboxBackend } from "../backend.js";

/** The Kubernetes SandboxBackend. */
export async function openKubernetesBackend(
  _config: KubernetesBackendConfig,
  _options: BackendOptions,
): Promise<SandboxBackend> {
  throw new SandboxError("the Kubernetes SandboxBackend is not written yet");
}
