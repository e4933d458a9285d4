/**
 * The docker-exec implementation of SandboxIO (../io.ts): every command and file operation is one
 * or two `docker exec`s (Engine API 1.41 `POST /containers/{id}/exec`) of the process-group
 * wrapper or coreutils, plus the archive API for writes. Used when the container does not run
 * warden-helper (asked for, an old image, or the helper could not start).
 */
import type Docker from "dockerode";
import type { SandboxIO } from "../io.js";
import { execInContainer } from "./exec.js";
import { listDirectory, readFileRange, realPath, statPath } from "./file-ops.js";
import { writeFileAtomic } from "./write-file.js";

export { type CaptureResult, captureExec } from "./capture.js";
export { execInContainer } from "./exec.js";
export { checkExit, listDirectory, readFileRange, realPath, statPath, typeOfLetter } from "./file-ops.js";
export { type DockerExecSpec, mapExecError, type RunningExec, startDockerExec } from "./run.js";
export { killGroupCommand, pgidFile, wrapCommand } from "./wrapper.js";
export { writeFileAtomic } from "./write-file.js";

/** SandboxIO over docker exec in `container` (the sandbox user, no TTY, stdin /dev/null). */
export function dockerExecIO(container: Docker.Container): SandboxIO {
  return {
    kind: "docker-exec",
    exec: (command, options) => execInContainer(container, command, options),
    readFile: (path, range, options) => readFileRange(container, path, range, options),
    writeFile: (path, data, options) => writeFileAtomic(container, path, data, options),
    stat: (path, options) => statPath(container, path, options),
    realpath: (path, options) => realPath(container, path, options),
    listDir: (path, options) => listDirectory(container, path, options),
    close: () => {},
  };
}
