/**
 * The Docker SandboxBackend: hardened containers on one Docker engine (create.ts), claimed from a
 * warm pool of spare containers when one is configured (pool.ts over pool/pooled-claims.ts), taken
 * over after a restart (adopt-sandbox.ts), and found and removed by warden's labels
 * (src/sandbox/labels.ts), the way testcontainers-node's sweeper finds its resources.
 */
import type Docker from "dockerode";
import { fromDockerError } from "../../errors.js";
import type { BackendCapabilities, BackendOptions, ManagedSandbox, SandboxBackend } from "../backend.js";
import { LABEL } from "../labels.js";
import { pooledClaims } from "../pool/pooled-claims.js";
import { adoptDockerSandbox } from "./adopt-sandbox.js";
import { createSandbox } from "./create.js";
import { removeSandboxResources } from "./docker-sandbox.js";
import { getDocker, pingEngine } from "./engine.js";
import { gc } from "./gc.js";
import { dockerPoolBackend } from "./pool.js";
import { sweepDocker } from "./sweep.js";

/** The Docker backend's settings. */
export interface DockerBackendConfig {
  kind: "docker";
  /** Default: the process-wide client (getDocker: $DOCKER_HOST, else the local socket). */
  docker?: Docker;
}

/** What Docker gives: every workspace mode, mounts, both runtimes and exec paths, egress allowlists. */
function capabilitiesOf(options: BackendOptions): BackendCapabilities {
  return {
    workspaceModes: ["copy", "ro", "rw"],
    mounts: true,
    networkModes: ["none", "allowlist"],
    runtimes: ["runc", "runsc"],
    execPaths: ["channel", "docker-exec"],
    warmPool: (options.warmPool?.size ?? 0) > 0,
  };
}

/**
 * The Docker SandboxBackend, after pinging the engine (rejects EngineUnreachableError naming the
 * engine's address when it does not answer). See dockerBackend.
 */
export async function openDockerBackend(
  config: DockerBackendConfig,
  options: BackendOptions,
): Promise<SandboxBackend> {
  const docker = config.docker ?? getDocker();
  await pingEngine(docker);
  return dockerBackend({ ...config, docker }, options);
}

/**
 * The Docker SandboxBackend without the ping (createSession's: createSandbox pings at each
 * create). `create` is createSandbox; `claim` takes a spare of the tenant's warm pool for a
 * poolable spec (pooledClaims); `adopt` is adoptDockerSandbox; `list` reports the containers
 * labelled with one of the tenants; `gc` is gc.ts's; `sweep` is sweepDocker; `close` drains the
 * warm pool. `scopes` is empty.
 */
export function dockerBackend(config: DockerBackendConfig, options: BackendOptions = {}): SandboxBackend {
  const docker = config.docker ?? getDocker();
  const create: SandboxBackend["create"] = (spec, identity, call = {}) =>
    createSandbox({ ...spec, ...identity, ...call }, docker);
  const ttl = options.warmPool ? { ttlMs: options.warmPool.ttlMs } : {};
  const pool = pooledClaims(options, () => dockerPoolBackend({ docker, ...ttl }), create);
  return {
    kind: "docker",
    capabilities: capabilitiesOf(options),
    scopes: [],
    create,
    claim: pool.claim,
    adopt: (request) => adoptDockerSandbox(docker, request, options.log),

    async list(tenants) {
      try {
        const list = await docker.listContainers({ all: true, filters: { label: [LABEL.session] } });
        return list
          .filter((c) => tenants.includes(c.Labels[LABEL.tenant] ?? ""))
          .map(
            (c): ManagedSandbox => ({
              id: c.Id,
              sessionId: c.Labels[LABEL.session] ?? "",
              tenant: c.Labels[LABEL.tenant] ?? "",
              controller: c.Labels[LABEL.controller] ?? "",
              running: c.State === "running",
            }),
          );
      } catch (err) {
        throw fromDockerError(err, { what: "listing warden containers" });
      }
    },

    async remove({ id }) {
      let volume: string | undefined;
      try {
        volume = (await docker.getContainer(id).inspect()).Config.Labels?.[LABEL.volume];
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return;
        throw fromDockerError(err, { what: "inspecting a warden container", containerId: id });
      }
      await removeSandboxResources(docker, id, volume);
    },

    gc: (gcOptions) => gc(gcOptions, docker),
    sweep: (scope) => sweepDocker(docker, scope),
    poolStats: pool.poolStats,
    close: pool.close,
  };
}
