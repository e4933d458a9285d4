/**
 * The real SessionBackend: sessions from src/session's createSession on hardened Docker sandboxes,
 * and, after a restart, sessions re-opened on their still-running containers (`adopt`). Containers
 * are found and removed by warden's labels (src/sandbox/labels.ts), the way testcontainers-node's
 * sweeper finds its resources.
 */
import type Docker from "dockerode";
import { fromDockerError } from "../errors.js";
import { removeSandboxResources } from "../sandbox/docker-sandbox.js";
import { DockerSandbox, getDocker, LABEL } from "../sandbox/index.js";
import type { SandboxInfo } from "../sandbox/types.js";
import { WORKSPACE_DIR } from "../sandbox/types.js";
import { packDirectory, type WorkspaceHashes } from "../sandbox/workspace-copy.js";
import { createSession, openSession } from "../session/index.js";
import { createSpillStore } from "../session/spill-store.js";
import type { Session, SessionOptions } from "../session/types.js";
import { builtinTools } from "../tools/index.js";
import type { ManagedContainer, SessionBackend } from "./backend.js";
import type { SessionRecord } from "./record-store.js";

/** The baseline hashes of a workspace host directory (what changedPaths compares with). */
async function baselineOf(hostPath: string | undefined): Promise<WorkspaceHashes> {
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath);
  packed.stream.resume();
  try {
    await packed.done;
  } catch {
    return new Map();
  }
  return packed.hashes;
}

/** Sessions on the Docker engine `docker` (default: the process-wide client). */
export function createDockerBackend(docker: Docker = getDocker(), spillDir?: string): SessionBackend {
  const withSpill = (options: SessionOptions): SessionOptions =>
    spillDir ? { spillDir, ...options } : options;
  return {
    create: (options) => createSession(withSpill(options)),

    async adopt(record: SessionRecord, options: SessionOptions): Promise<Session | null> {
      const container = docker.getContainer(record.containerId);
      let inspect: Docker.ContainerInspectInfo;
      try {
        inspect = await container.inspect();
      } catch {
        return null;
      }
      const labels = inspect.Config.Labels ?? {};
      if (
        !inspect.State.Running ||
        labels[LABEL.session] !== record.id ||
        labels[LABEL.tenant] !== record.tenant
      ) {
        return null;
      }
      const info: SandboxInfo = {
        containerId: inspect.Id,
        sessionId: record.id,
        tenant: record.tenant,
        image: record.image,
        runtime: inspect.HostConfig.Runtime === "runsc" ? "runsc" : "runc",
        workspaceMode: record.workspaceMode,
        roots: [WORKSPACE_DIR],
        createdAt: new Date(labels[LABEL.created] ?? record.createdAt),
        expiresAt: new Date(labels[LABEL.expires] ?? record.expiresAt),
      };
      const sandbox = new DockerSandbox(
        info,
        docker,
        container,
        labels[LABEL.volume],
        await baselineOf(record.workspaceHostPath),
      );
      return openSession(withSpill({ ...options, sessionId: record.id }), {
        createSandbox: async () => sandbox,
        createSpillStore,
        builtinTools,
      });
    },

    async listContainers(tenants: readonly string[]): Promise<ManagedContainer[]> {
      try {
        const list = await docker.listContainers({ all: true, filters: { label: [LABEL.session] } });
        return list
          .filter((c) => tenants.includes(c.Labels[LABEL.tenant] ?? ""))
          .map((c) => ({
            containerId: c.Id,
            sessionId: c.Labels[LABEL.session] ?? "",
            tenant: c.Labels[LABEL.tenant] ?? "",
            controller: c.Labels[LABEL.controller] ?? "",
            running: c.State === "running",
          }));
      } catch (err) {
        throw fromDockerError(err, { what: "listing warden containers" });
      }
    },

    async removeContainer(containerId: string): Promise<void> {
      let volume: string | undefined;
      try {
        volume = (await docker.getContainer(containerId).inspect()).Config.Labels?.[LABEL.volume];
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return;
        throw fromDockerError(err, { what: "inspecting a warden container", containerId });
      }
      await removeSandboxResources(docker, containerId, volume);
    },
  };
}
