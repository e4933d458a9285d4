/**
 * The first half of creating a sandbox: the copy-mode volume and the hardened container, started,
 * with warden-helper as its main process and the channel connected (or docker exec when asked
 * for, or when the helper cannot start: the reason is logged, and a container the helper left
 * stopped is recreated without it). No workspace content yet, so the warm pool keeps these.
 * The second half (workspace copy, DockerSandbox) is `finishSandbox` in create.ts.
 */
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { type EgressGateway, sandboxNetworkConfig, startEgressGateway } from "../../egress/index.js";
import { fromDockerError, InvalidArgumentError, SandboxError } from "../../errors.js";
import { isAbortError, omitUndefined, throwIfAborted } from "../../util/index.js";
import type { ChannelClient } from "../channel/index.js";
import type { ExecPath } from "../exec-path.js";
import { LABEL, sandboxLabels } from "../labels.js";
import type { ResolvedSandboxOptions } from "../options.js";
import { UID_LABEL, uidRegistry } from "../sandbox-uid.js";
import {
  applyHelperPlan,
  createHelperContainer,
  planHelper,
  rememberSocketDir,
  removeSocketDir,
  socketDirFor,
  startWithHelper,
  warnChannelOnAttach,
  warnHelperFallback,
} from "./channel/index.js";
import { removeSandboxResources } from "./docker-sandbox.js";
import { hardenedContainerConfig, workspaceVolumeConfig } from "./hardening.js";

/** A started, hardened container with an empty workspace. */
export interface PreparedSandbox {
  container: Docker.Container;
  /** The copy-mode workspace volume. */
  volumeName?: string;
  /** The open channel, when the helper runs. */
  channel?: ChannelClient;
  execPath: ExecPath;
  /** The host uid (= gid) its processes run as (sandbox-uid.ts), also its UID_LABEL. */
  uid: number;
  createdAt: Date;
  expiresAt: Date;
  /** The options it was prepared with (labels use its sessionId and tenant). */
  opts: ResolvedSandboxOptions;
  /** The session's egress gateway (network mode `allowlist`); closed after the container is removed. */
  egress?: EgressGateway;
}

/**
 * Under gVisor (runtime `runsc`) only the channel keeps user namespaces out: a command that `docker
 * exec` starts is no child of warden-helper, and runsc loads no container seccomp profile (runc's
 * default profile refuses them). Since helper version 8 the docker-exec path runs each command
 * under the helper's filter too when the image has one (exec/seccomp-wrap.ts), but an image
 * without it would run them unfiltered, so under runsc that path stays refused. The message of
 * both refusals (asked for, or no helper started).
 */
const RUNSC_NEEDS_CHANNEL =
  "under gVisor (runtime \"runsc\") commands run only through warden-helper's channel: a command that docker exec starts runs outside the helper's seccomp filter, and gVisor loads no container seccomp profile, so it could make a user namespace";

/**
 * Creates and starts the container (and volume) for `opts`, and its gateway for an allowlist
 * network. `extraLabels` are added to both (the pool marks its entries). Rejects with the engine's errors mapped, or AbortError; whatever was
 * created is removed first. Under runsc the docker-exec path is refused (InvalidArgumentError when
 * asked for, SandboxError when no helper channel started): RUNSC_NEEDS_CHANNEL.
 */
export async function prepareSandbox(
  docker: Docker,
  opts: ResolvedSandboxOptions,
  execPath: ExecPath,
  options: {
    signal?: AbortSignal;
    extraLabels?: Record<string, string>;
    /** A warm-pool spare: its gateway is bound to no session until the claim (EgressGateway.bind). */
    spare?: boolean;
  } = {},
): Promise<PreparedSandbox> {
  const { signal } = options;
  if (opts.runtime === "runsc" && execPath === "docker-exec")
    throw new InvalidArgumentError(
      `execPath "docker-exec" is refused: ${RUNSC_NEEDS_CHANNEL}; use execPath "channel" (the default).`,
    );
  const createdAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const expiresAt = new Date(createdAt.getTime() + opts.ttlMs);
  const uid = uidRegistry.claim(opts.workspaceMode);
  const labels = {
    ...sandboxLabels({
      sessionId: opts.sessionId,
      tenant: opts.tenant,
      createdAt,
      expiresAt,
      controller: opts.controllerId,
    }),
    ...options.extraLabels,
    [UID_LABEL]: String(uid),
  };
  const volumeName =
    opts.workspaceMode === "copy"
      ? `warden-ws-${opts.sessionId.slice(0, 40)}-${randomBytes(4).toString("hex")}`
      : undefined;
  let containerId: string | undefined;
  let volumeCreated = false;
  let egress: EgressGateway | undefined;
  let socketDir: string | undefined;
  try {
    const { network } = opts;
    if (network.mode === "allowlist")
      egress = await startEgressGateway(docker, {
        sessionId: opts.sessionId,
        labels,
        keepLabels: [LABEL.tenant, LABEL.created, LABEL.expires, LABEL.controller],
        network,
        ...(options.spare ? { spare: true } : {}),
        ...omitUndefined({ signal }),
      });
    if (volumeName) {
      await docker.createVolume(workspaceVolumeConfig(volumeName, opts.limits.workspaceBytes, labels, uid));
      volumeCreated = true;
    }
    throwIfAborted(signal);
    const hardened = hardenedContainerConfig({
      image: opts.image,
      limits: opts.limits,
      runtime: opts.runtime,
      labels: volumeName ? { ...labels, [LABEL.volume]: volumeName } : labels,
      workspaceMode: opts.workspaceMode,
      ...omitUndefined({ workspaceHostPath: opts.workspaceHostPath }),
      ...omitUndefined({ workspaceVolume: volumeName }),
      mounts: opts.mounts,
      uid,
    });
    const config = egress && network.mode === "allowlist" ? sandboxNetworkConfig(hardened, egress) : hardened;
    const plan = await planHelper(docker, opts.image, execPath, opts.runtime);
    if (plan.kind !== "none") {
      const sandbox = { gid: uid, runtime: opts.runtime, hostGroup: opts.workspaceMode === "rw" };
      socketDir = await socketDirFor(docker, sandbox, warnChannelOnAttach);
    }
    let container: Docker.Container;
    ({ container, socketDir } = await createHelperContainer(
      docker,
      applyHelperPlan(config, plan),
      socketDir,
    ));
    containerId = container.id;
    if (socketDir) rememberSocketDir(containerId, socketDir);
    uidRegistry.bind(containerId, uid);
    throwIfAborted(signal);
    const started = await startWithHelper(container, plan, omitUndefined({ signal, socketDir }));
    const base = {
      ...omitUndefined({ volumeName }),
      uid,
      createdAt,
      expiresAt,
      opts,
      ...(egress ? { egress } : {}),
    };
    if ("client" in started) return { ...base, container, channel: started.client, execPath: "channel" };
    if (opts.runtime === "runsc")
      throw new SandboxError(
        `warden-helper did not start in the sandbox (${started.reason}), and ${RUNSC_NEEDS_CHANNEL}; rebuild the image (npm run images) or check its helper (io.warden.helper label).`,
      );
    if (plan.kind !== "none") warnHelperFallback(container.id, started.reason);
    if (!started.running) {
      await removeSandboxResources(docker, container.id);
      containerId = undefined;
      container = await docker.createContainer(config);
      containerId = container.id;
      uidRegistry.bind(containerId, uid);
      throwIfAborted(signal);
      await container.start();
    }
    return { ...base, container, execPath: "docker-exec" };
  } catch (err) {
    await removeSandboxResources(docker, containerId, volumeCreated ? volumeName : undefined).catch(() => {});
    await egress?.close().catch(() => {});
    if (socketDir) await removeSocketDir(socketDir);
    uidRegistry.release(uid);
    if (isAbortError(err)) throw err;
    throw fromDockerError(err, { what: "creating the sandbox", ...omitUndefined({ containerId }) });
  }
}
