/**
 * The docker-exec implementation of SandboxIO (../io.ts): every command and file operation is one
 * or two `docker exec`s (Engine API 1.41 `POST /containers/{id}/exec`) of the process-group
 * wrapper or coreutils, plus the archive API for writes. Used when the container does not run
 * warden-helper (asked for, an old image, or the helper could not start).
 */
import type Docker from "dockerode";
import type { SandboxIO } from "../../io.js";
import { execInContainer } from "./exec.js";
import { listDirectoryRaw, readFileRange, realPath, statPath } from "./file-ops.js";
import { seccompPrefix } from "./seccomp-wrap.js";
import { writeFileAtomic } from "./write-file.js";

/** warden's own short commands (hashing, adoption): an argv with its output captured. */
export { captureExec } from "./capture.js";

/**
 * SandboxIO over docker exec in `container` (as the container's own user, its `User` field: no
 * exec names another; no TTY, stdin /dev/null). `uid` owns what writeFile puts in through the archive API.
 * Commands run under warden-helper's seccomp filter when the image has a helper of version 8 or
 * later (seccomp-wrap.ts); with `requireSeccomp` (an rw sandbox) they are refused without one.
 */
export function dockerExecIO(
  container: Docker.Container,
  uid: number,
  options: { requireSeccomp?: boolean } = {},
): SandboxIO {
  const seccomp = seccompPrefix(container, options.requireSeccomp ?? false);
  return {
    kind: "docker-exec",
    exec: (command, options) => execInContainer(container, command, options, seccomp),
    readFile: (path, range, options) => readFileRange(container, path, range, options),
    writeFile: (path, data, options) => writeFileAtomic(container, path, data, uid, options),
    stat: (path, options) => statPath(container, path, options),
    realpath: (path, options) => realPath(container, path, options),
    listDirRaw: (path, options) => listDirectoryRaw(container, path, options),
    close: () => {},
  };
}
