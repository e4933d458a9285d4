/**
 * The docker-exec path's seccomp filter. A process that `docker exec` starts is no child of
 * warden-helper, so it would run outside the filter the helper puts on the channel's commands
 * (images/sandbox/helper/seccomp.go): runc's default profile keeps user namespaces out, but
 * nothing would stop `chmod 4755` of the sandbox's own file, which in an `rw` session is a
 * set-user-ID file of a host uid in the host directory (images/sandbox/helper/filemode.go). So
 * every command of this path runs as `warden-helper --seccomp-exec sh -c <wrapper> …`
 * (helper version 8, seccomp_exec.go): the helper installs the same filter on itself and execs.
 *
 * The helper is looked for in the image (HELPER_PATH, else the execute-only SEALED_HELPER_PATH:
 * root-owned files of a read-only root file system, which the sandbox user cannot replace), once
 * per sandbox, by its `--version`. A sandbox without one of version 8 or later runs its commands
 * without the filter in copy mode (its files reach the host only through apply, which writes
 * permission bits only: src/review/apply.ts), and refuses them in `rw` mode.
 */
import type Docker from "dockerode";
import { SandboxError } from "../../../errors.js";
import { omitUndefined } from "../../../util/index.js";
import { HELPER_PATH, SEALED_HELPER_PATH } from "../../channel/protocol/helper-path.js";
import { captureExec } from "./capture.js";

/** The first warden-helper version with `--seccomp-exec` and the file-mode filter. */
const SECCOMP_EXEC_VERSION = 8;

/** Prints the first of "$@" whose `--version` is at least $SECCOMP_EXEC_VERSION; exit 1 when none. */
const PROBE = `for h in "$@"; do v=$("$h" --version 2>/dev/null) && [ "$v" -ge ${SECCOMP_EXEC_VERSION} ] 2>/dev/null && { printf %s "$h"; exit 0; }; done; exit 1`;

/**
 * Finds the image's helper that serves `--seccomp-exec` in `container`. Resolves with the argv
 * prefix that runs a command under the filter (`[path, "--seccomp-exec"]`), or null when the image
 * has no such helper. Rejects like captureExec (SandboxNotRunningError, SandboxError).
 */
async function findSeccompExec(container: Docker.Container, signal?: AbortSignal): Promise<string[] | null> {
  const found = await captureExec(container, ["sh", "-c", PROBE, "probe", HELPER_PATH, SEALED_HELPER_PATH], {
    ...omitUndefined({ signal }),
  });
  const path = found.stdout.toString("utf8");
  return found.exitCode === 0 && (path === HELPER_PATH || path === SEALED_HELPER_PATH)
    ? [path, "--seccomp-exec"]
    : null;
}

/**
 * The prefix of every command of one docker-exec sandbox, found on first use and kept (a failed
 * look-up, e.g. an abort, is tried again next time). With `required` (an `rw` sandbox) a sandbox
 * without the helper's filter rejects every command with SandboxError naming the fix.
 */
export function seccompPrefix(
  container: Docker.Container,
  required: boolean,
): (signal?: AbortSignal) => Promise<string[]> {
  let found: Promise<string[] | null> | undefined;
  return async (signal) => {
    if (!found) {
      const started = findSeccompExec(container, signal);
      started.catch(() => {
        if (found === started) found = undefined;
      });
      found = started;
    }
    const prefix = await found;
    if (prefix) return prefix;
    if (required)
      throw new SandboxError(
        `this rw sandbox's image has no warden-helper ${SECCOMP_EXEC_VERSION} or later (${HELPER_PATH}), so its commands would run over docker exec without the seccomp filter that keeps set-user-ID and set-group-ID files out of the host directory; nothing was run: rebuild the image (npm run images), or use workspace mode "copy"`,
      );
    return [];
  };
}
