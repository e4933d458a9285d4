/**
 * The hardened container configuration (Docker Engine API 1.41 `POST /containers/create`).
 * Every sandbox gets: no network, read-only root filesystem, all capabilities dropped,
 * no-new-privileges, pids/memory(=swap, see cgroupMemoryBytes)/CPU limits, docker-init as PID 1 (reaps zombies;
 * the channel path replaces it with warden-helper as PID 1, see channel/container.ts), the sandbox's own non-root
 * uid:gid (sandbox-uid.ts; never 0), size-limited tmpfs for /tmp, HOME (/home/sandbox, the user's
 * own: pip's user installs and npm's cache land there) and /run/warden, and an environment of
 * LANG/PATH/HOME only (nothing from the host). No Docker socket is ever mounted. No log driver
 * (`LogConfig` `none`): nothing reads a sandbox's engine log, and with json-file a command that
 * writes to PID 1's stdout (/proc/1/fd/1: docker-init runs as the sandbox's user) would fill the
 * engine's disk without a cap (the channel path sets the same, channel/container.ts).
 */
import type Docker from "dockerode";
import { InvalidArgumentError } from "../../errors.js";
import { BASE_ENV, SANDBOX_HOME } from "../io-contract.js";
import { cgroupMemoryBytes } from "../limits.js";
import { requireNonRootUid, sandboxUser } from "../sandbox-uid.js";
import type { ReadOnlyMount, SandboxLimits, WorkspaceMode } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";

/** Private per-sandbox scratch for warden itself (exec pgid files); not in the tools' roots. */
export const WARDEN_RUN_DIR = "/run/warden";

/** Inputs of the container configuration. */
export interface HardenedConfigInput {
  image: string;
  limits: SandboxLimits;
  runtime: "runc" | "runsc";
  labels: Record<string, string>;
  workspaceMode: WorkspaceMode;
  /** Host directory for `ro`/`rw`. */
  workspaceHostPath?: string;
  /** Named tmpfs volume for `copy`. */
  workspaceVolume?: string;
  mounts: ReadOnlyMount[];
  /** The host uid (= gid) every process of the sandbox runs as (sandbox-uid.ts); never 0. */
  uid: number;
}

/** Builds the `createContainer` body. The command is `sleep infinity`; work happens through exec. */
export function hardenedContainerConfig(input: HardenedConfigInput): Docker.ContainerCreateOptions {
  const { limits } = input;
  const uid = requireNonRootUid(input.uid);
  const cgroupMemory = cgroupMemoryBytes(limits, input.workspaceMode);
  const mounts: Docker.MountConfig = [];
  if (input.workspaceMode === "copy") {
    if (!input.workspaceVolume)
      throw new InvalidArgumentError({
        field: "workspaceVolume",
        problem: "is required in copy mode: pass the volume that holds the workspace copy",
      });
    mounts.push({ Type: "volume", Source: input.workspaceVolume, Target: WORKSPACE_DIR, ReadOnly: false });
  } else if (input.workspaceHostPath) {
    mounts.push({
      Type: "bind",
      Source: input.workspaceHostPath,
      Target: WORKSPACE_DIR,
      ReadOnly: input.workspaceMode === "ro",
    });
  }
  for (const m of input.mounts) {
    mounts.push({ Type: "bind", Source: m.hostPath, Target: m.containerPath, ReadOnly: true });
  }
  return {
    Image: input.image,
    Cmd: ["sleep", "infinity"],
    User: sandboxUser(uid),
    WorkingDir: WORKSPACE_DIR,
    Env: [...BASE_ENV],
    Labels: input.labels,
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: limits.pids,
      Memory: cgroupMemory,
      MemorySwap: cgroupMemory,
      NanoCpus: Math.round(limits.cpus * 1e9),
      Init: true,
      Runtime: input.runtime,
      Privileged: false,
      Tmpfs: {
        "/tmp": `size=${limits.tmpBytes},mode=1777`,
        // The image's /home/sandbox is on the read-only root; this one is the session's, as large as /tmp.
        [SANDBOX_HOME]: `size=${limits.tmpBytes},uid=${uid},gid=${uid},mode=0700`,
        [WARDEN_RUN_DIR]: `size=1m,uid=${uid},gid=${uid},mode=0700`,
      },
      Mounts: mounts,
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      LogConfig: { Type: "none", Config: {} },
    },
  };
}

/** The `createVolume` body of a copy-mode workspace: a tmpfs capped at `sizeBytes`, owned by `uid`:`uid`. */
export function workspaceVolumeConfig(
  name: string,
  sizeBytes: number,
  labels: Record<string, string>,
  uid: number,
): { Name: string; Driver: string; DriverOpts: Record<string, string>; Labels: Record<string, string> } {
  return {
    Name: name,
    Driver: "local",
    DriverOpts: {
      type: "tmpfs",
      device: "tmpfs",
      o: `size=${sizeBytes},uid=${requireNonRootUid(uid)},gid=${uid},mode=0755`,
    },
    Labels: labels,
  };
}
