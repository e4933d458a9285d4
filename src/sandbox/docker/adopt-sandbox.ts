/**
 * The Docker backend's `adopt`: a sandbox taken over on its still-running container after the
 * controller restarted. The container is judged by its labels (src/sandbox/labels.ts) before
 * anything in it is touched; then the session's egress gateway is re-attached (egress/adopt.ts),
 * what the dead controller still ran is killed and the exec channel re-attached (adopt.ts).
 */
import type Docker from "dockerode";
import { type AdoptedEgress, adoptEgressGateway } from "../../egress/index.js";
import type { AdoptRequest } from "../backend.js";
import { LABEL } from "../labels.js";
import { parseSandboxUid } from "../sandbox-uid.js";
import type { Sandbox, SandboxInfo } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import { baselineOf } from "../workspace-baseline.js";
import { adoptExec } from "./adopt.js";
import { DockerSandbox } from "./docker-sandbox.js";
import { withEgress } from "./egress-hook.js";
import { POOL_LABEL } from "./pool.js";

/**
 * The sandbox of `request` on container `request.id`, or null when the container cannot be used:
 * gone, stopped, labelled for another session (a spare claimed from the warm pool keeps its
 * `pool-<uuid>` label and is accepted) or another tenant, or without its own non-root uid. A
 * request with an allowlist network gets its gateway back; a gateway found gone is logged and the
 * sandbox then has no network. Rejects what adoptExec rejects (the gateway is released first).
 */
export async function adoptDockerSandbox(
  docker: Docker,
  request: AdoptRequest,
  log?: (line: string) => void,
): Promise<Sandbox | null> {
  const container = docker.getContainer(request.id);
  let inspect: Docker.ContainerInspectInfo;
  try {
    inspect = await container.inspect();
  } catch {
    return null;
  }
  const labels = inspect.Config.Labels ?? {};
  // A sandbox claimed from the warm pool keeps the `pool-<uuid>` session label it was created with.
  const sessionLabelOk = labels[LABEL.session] === request.sessionId || labels[POOL_LABEL] !== undefined;
  if (!inspect.State.Running || !sessionLabelOk || labels[LABEL.tenant] !== request.tenant) {
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
  const egress = await adoptEgress(docker, request, inspect, log);
  let exec: Awaited<ReturnType<typeof adoptExec>>;
  try {
    exec = await adoptExec(container, inspect, log ? { log } : {});
  } catch (err) {
    await egress?.close().catch(() => {});
    throw err;
  }
  if (exec.fallbackReason) {
    log?.(
      `session ${request.sessionId}: no exec channel after adoption (${exec.fallbackReason}); using docker exec`,
    );
  }
  const info: SandboxInfo = {
    containerId: inspect.Id,
    sessionId: request.sessionId,
    tenant: request.tenant,
    image: request.image,
    runtime: inspect.HostConfig.Runtime === "runsc" ? "runsc" : "runc",
    workspaceMode: request.workspaceMode,
    roots: [WORKSPACE_DIR],
    createdAt: new Date(labels[LABEL.created] ?? request.createdAt),
    expiresAt: new Date(labels[LABEL.expires] ?? request.expiresAt),
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
    await baselineOf(request.workspaceHostPath),
    exec.channel,
  );
  return egress ? withEgress(docked, egress) : docked;
}

/** The adopted egress of a request with an allowlist (egress/adopt.ts); a gateway found gone is logged. */
async function adoptEgress(
  docker: Docker,
  request: AdoptRequest,
  inspect: Docker.ContainerInspectInfo,
  log?: (line: string) => void,
): Promise<AdoptedEgress | undefined> {
  if (request.network?.mode !== "allowlist") return undefined;
  const sessionId = request.sessionId;
  const networkName = inspect.HostConfig.NetworkMode ?? "";
  // A sandbox claimed from the warm pool and its gateway both carry the spare's `pool-<uuid>`.
  const gatewaySessionId = inspect.Config.Labels?.[LABEL.session] ?? sessionId;
  const egress = await adoptEgressGateway(docker, {
    sessionId,
    gatewaySessionId,
    networkName,
    network: request.network,
  });
  if (!egress.alive) log?.(`session ${sessionId}: its egress gateway is gone; the session has no network`);
  return egress;
}
