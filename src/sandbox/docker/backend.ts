/** Placeholder of the Docker SandboxBackend (issue 38, wt-seam replaces it). */
import type Docker from "dockerode";
import { SandboxError } from "../../errors.js";
import type { BackendOptions, SandboxBackend } from "../backend.js";

/** The Docker backend's settings. */
export interface DockerBackendConfig {
  kind: "docker";
  /** Default: the process-wide client (getDocker: $DOCKER_HOST, else the local socket). */
  docker?: Docker;
}

/** The Docker SandboxBackend. */
export async function openDockerBackend(
  _config: DockerBackendConfig,
  _options: BackendOptions,
): Promise<SandboxBackend> {
  throw new SandboxError("the Docker SandboxBackend is not written yet");
}
