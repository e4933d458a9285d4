/**
 * Container settings that make warden-helper the container's main process: PID 1 itself, without
 * docker-init (Init false), stdin kept open for the channel, stdio attachable, no log driver (the
 * helper's frames are protocol, not logs: with json-file every byte a command printed would also
 * be written to disk).
 *
 * Why no docker-init: its fds 0/1 are the attach pipes, and it runs as the sandbox user and is
 * dumpable, so any command could open /proc/1/fd/1 and forge reply frames, or /proc/1/fd/0 and
 * steal requests. As PID 1 the helper hands the pipes to a non-dumpable child, points its own
 * stdio at /dev/null and reaps zombies (images/sandbox/helper/init.go).
 */
import type Docker from "dockerode";
import { HELPER_PATH } from "../../channel/protocol/helper-path.js";

export { HELPER_PATH };

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
    HostConfig: { ...config.HostConfig, Init: false, LogConfig: { Type: "none", Config: {} } },
  };
}
