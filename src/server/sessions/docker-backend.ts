/**
 * The real SessionBackend: sessions from src/session's openSession on hardened Docker sandboxes,
 * claimed from a warm pool (src/pool) when one is configured, and, after a restart, sessions
 * re-opened on their still-running containers (`adopt`: what the dead server left running in them
 * is killed and the exec channel re-attached, src/sandbox/docker/adopt.ts). Containers are found and
 * removed by warden's labels (src/sandbox/labels.ts), the way testcontainers-node's sweeper finds
 * its resources.
 */
import type Docker from "dockerode";
import {
  type AdoptedEgress,
  adoptEgressGateway,
  removeEgressWhere,
  SESSION_LABEL,
} from "../../egress/index.js";
import { fromDockerError } from "../../errors.js";
import type { PreparedSandbox, SandboxInfo } from "../../sandbox/index.js";
import {
  adoptExec,
  createSandbox,
  DockerSandbox,
  dockerPoolBackend,
  getDocker,
  LABEL,
  POOL_LABEL,
  type PoolRequest,
  parseSandboxUid,
  removeSandboxResources,
  removeUnusedSocketDirs,
  removeVolumeIfUnused,
  type TenantPools,
  tenantPools,
  WORKSPACE_DIR,
  withEgress,
} from "../../sandbox/index.js";
import type { Session, SessionOptions } from "../../session/index.js";
import { adoptSpillStore, openSession } from "../../session/index.js";
import { builtinTools } from "../../tools/index.js";
import type { ManagedContainer, SessionBackend } from "./backend.js";
import { baselineOf, pooledSessions, type SessionBackendOptions } from "./pooled-sessions.js";
import type { SessionRecord } from "./record-store.js";

/** Options of the Docker SessionBackend: the engine client (default: the process-wide one), and the sessions' options. */
export interface DockerBackendOptions extends SessionBackendOptions {
  docker?: Docker;
}

/** Sessions on the Docker engine (see DockerBackendOptions). `close()` drains the warm pool. */
export function createDockerBackend(options: DockerBackendOptions = {}): SessionBackend {
  const log = options.log;
  const docker = options.docker ?? getDocker();
  const pools = poolsOf(docker, options);
  const sessions = pooledSessions(options, pools, (opts) => createSandbox(opts, docker));
  const { withSpill } = sessions;
  /**
   * The adopted egress of a session whose options have an allowlist (egress/adopt.ts); a gateway
   * found gone is logged: the session then has no network.
   */
  const adoptEgress = async (
    sessionId: string,
    inspect: Docker.ContainerInspectInfo,
    options: SessionOptions,
  ): Promise<AdoptedEgress | undefined> => {
    if (options.network?.mode !== "allowlist") return undefined;
    const networkName = inspect.HostConfig.NetworkMode ?? "";
    const egress = await adoptEgressGateway(docker, { sessionId, networkName, network: options.network });
    if (!egress.alive) log?.(`session ${sessionId}: its egress gateway is gone; the session has no network`);
    return egress;
  };
  return {
    create: sessions.create,
    close: sessions.close,
    idleSpares: sessions.idleSpares,
    poolBackoffKeys: sessions.poolBackoffKeys,

    async adopt(record: SessionRecord, options: SessionOptions): Promise<Session | null> {
      const container = docker.getContainer(record.containerId);
      let inspect: Docker.ContainerInspectInfo;
      try {
        inspect = await container.inspect();
      } catch {
        return null;
      }
      const labels = inspect.Config.Labels ?? {};
      // A sandbox claimed from the warm pool keeps the `pool-<uuid>` session label it was created with.
      const sessionLabelOk = labels[LABEL.session] === record.id || labels[POOL_LABEL] !== undefined;
      if (!inspect.State.Running || !sessionLabelOk || labels[LABEL.tenant] !== record.tenant) {
        return null;
      }
      // Its own uid (never root), as created: a container without one is not adopted.
      let uid: number;
      try {
        uid = parseSandboxUid(inspect.Config.User, `container ${inspect.Id}`);
      } catch {
        return null;
      }
      // Before the reset kills what ran: the connections it ends are audited too.
      const egress = await adoptEgress(record.id, inspect, options);
      let exec: Awaited<ReturnType<typeof adoptExec>>;
      try {
        exec = await adoptExec(container, inspect, log ? { log } : {});
      } catch (err) {
        await egress?.close().catch(() => {});
        throw err;
      }
      if (exec.fallbackReason) {
        log?.(
          `session ${record.id}: no exec channel after adoption (${exec.fallbackReason}); using docker exec`,
        );
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
        execPath: exec.execPath,
        ...(exec.channel ? { channelTransport: exec.channel.transportName } : {}),
        uid,
        network: egress?.alive
          ? { mode: "allowlist", proxyUrl: egress.proxyUrl, gatewayContainerId: egress.containerId }
          : { mode: "none" },
      };
      const docked = new DockerSandbox(
        info,
        docker,
        container,
        labels[LABEL.volume],
        await baselineOf(record.workspaceHostPath),
        exec.channel,
      );
      const sandbox = egress ? withEgress(docked, egress) : docked;
      return openSession(withSpill({ ...options, sessionId: record.id }), {
        createSandbox: async () => sandbox,
        // Its spill files stay readable until it closes (session/spill-adopt.ts).
        createSpillStore: adoptSpillStore,
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

    async removeUnusedVolumes(tenants: readonly string[], controllerId: string): Promise<string[]> {
      const removed: string[] = [];
      try {
        const { Volumes } = await docker.listVolumes({
          filters: { label: [LABEL.session, `${LABEL.controller}=${controllerId}`] },
        });
        for (const v of Volumes ?? []) {
          if (!tenants.includes(v.Labels?.[LABEL.tenant] ?? "")) continue;
          if (await removeVolumeIfUnused(docker, v.Name)) removed.push(v.Name);
        }
      } catch (err) {
        throw fromDockerError(err, { what: "removing unused warden volumes" });
      }
      return removed;
    },

    removeUnusedSocketDirs: () => removeUnusedSocketDirs(docker),

    async removeEgressExcept(tenants, keep): Promise<string[]> {
      try {
        const removed = await removeEgressWhere(docker, {
          filter: [],
          tenantLabel: LABEL.tenant,
          judge: (labels) =>
            tenants.includes(labels[LABEL.tenant] ?? "") &&
            !keep(labels[SESSION_LABEL] ?? "", labels[LABEL.controller] ?? "")
              ? "orphaned"
              : null,
        });
        return [...new Set(removed.map((r) => r.sessionId))];
      } catch (err) {
        throw fromDockerError(err, { what: "removing egress gateways of sessions not adopted" });
      }
    },

    async removeContainer({ containerId }: ManagedContainer): Promise<void> {
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

/** One warm pool per tenant (see tenantPools); undefined when the pool is off. */
function poolsOf(
  docker: Docker,
  options: DockerBackendOptions,
): TenantPools<PoolRequest, PreparedSandbox> | undefined {
  const config = options.warmPool;
  if (!config || config.size === 0) return undefined;
  return tenantPools({
    backend: dockerPoolBackend({ docker, ttlMs: config.ttlMs }),
    size: config.size,
    maxIdleMs: config.maxIdleMs,
    ...(config.maxKeys ? { maxKeys: config.maxKeys } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
