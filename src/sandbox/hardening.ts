/**
 * The hardened container configuration (Docker Engine API 1.41 `POST /containers/create`).
 * Every sandbox gets: no network, read-only root filesystem, all capabilities dropped,
 * no-new-privileges, pids/memory(=swap, see cgroupMemoryBytes)/CPU limits, docker-init as PID 1 (reaps zombies;
 * the channel path replaces it with warden-helper as PID 1, see channel/docker/container.ts), the non-root user 1000:1000, size-limited tmpfs for /tmp and /run/warden, and an environment of
 * LANG/PATH/HOME only (nothing from the host). No Docker socket is ever mounted.
 */
import type Docker from "dockerode";
import { BASE_ENV, SANDBOX_UID } from "./io-contract.js";
import { cgroupMemoryBytes } from "./limits.js";
import type { ReadOnlyMount, SandboxLimits, WorkspaceMode } from "./types.js";
import { WORKSPACE_DIR } from "./types.js";

/** The user every command runs as (the image's `sandbox` user). */
export const SANDBOX_USER = `${SANDBOX_UID}:${SANDBOX_UID}`;

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
}

/** Builds the `createContainer` body. The command is `sleep infinity`; work happens through exec. */
export function hardenedContainerConfig(input: HardenedConfigInput): Docker.ContainerCreateOptions {
  const { limits } = input;
  const cgroupMemory = cgroupMemoryBytes(limits, input.workspaceMode);
  const mounts: Docker.MountConfig = [];
  if (input.workspaceMode === "copy") {
    if (!input.workspaceVolume) throw new Error("copy mode needs a workspace volume");
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
    User: SANDBOX_USER,
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
        [WARDEN_RUN_DIR]: "size=1m,uid=1000,gid=1000,mode=0700",
      },
      Mounts: mounts,
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
    },
  };
}

/** The `createVolume` body of a copy-mode workspace: a tmpfs capped at `sizeBytes`, owned by 1000. */
export function workspaceVolumeConfig(
  name: string,
  sizeBytes: number,
  labels: Record<string, string>,
): { Name: string; Driver: string; DriverOpts: Record<string, string>; Labels: Record<string, string> } {
  return {
    Name: name,
    Driver: "local",
    DriverOpts: { type: "tmpfs", device: "tmpfs", o: `size=${sizeBytes},uid=1000,gid=1000,mode=0755` },
    Labels: labels,
  };
}
