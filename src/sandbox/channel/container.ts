/**
 * Container settings that make warden-helper the container's main process (under docker-init):
 * stdin kept open for the channel, stdio attachable, no log driver (the helper's frames are
 * protocol, not logs: with json-file every byte a command printed would also be written to disk).
 */
import type Docker from "dockerode";

/** Where the sandbox image installs the helper (images/sandbox/Dockerfile). */
export const HELPER_PATH = "/usr/local/bin/warden-helper";

/**
 * Returns a copy of a hardened `createContainer` body with the helper as its command. Hardening
 * fields are kept as they are; only the command and stdio settings change.
 */
export function withHelperMain(
  config: Docker.ContainerCreateOptions,
  helperPath: string = HELPER_PATH,
): Docker.ContainerCreateOptions {
  return {
    ...config,
    Entrypoint: [helperPath],
    Cmd: [],
    Tty: false,
    OpenStdin: true,
    StdinOnce: false,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: { ...config.HostConfig, LogConfig: { Type: "none", Config: {} } },
  };
}
