/**
 * Atomic whole-file write inside the sandbox: `mkdir -p` the parent, put a temp file
 * (`.warden-tmp-<random>`, owned by the sandbox's uid:gid, the requested mode) into the same directory through
 * the archive API (`PUT /containers/{id}/archive`), then `mv -f` it over the target, so a reader
 * sees the old or the new content, never a mix. Without `mode`, an existing target keeps its mode
 * (less any set-user-ID and set-group-ID bit).
 * The archive API writes into volumes and bind mounts (the workspace, rw mounts), not into the
 * container's tmpfs mounts (/tmp).
 */
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type Docker from "dockerode";
import tar from "tar-stream";
import { fromDockerError } from "../../../errors.js";
import { omitUndefined, throwIfAborted } from "../../../util/index.js";
import { checkFileMode, containerPath } from "../../io-contract.js";
import { tarOwner, toNodeStream } from "../../workspace-copy.js";
import { captureExec } from "./capture.js";
import { checkExit } from "./file-ops.js";

// 47: the directory is not writable for the sandbox user (read-only mount, mode): Docker's archive
// API would answer 500 for it, the channel's helper EROFS/EACCES (PermissionDeniedError on both).
const PREPARE = '[ -d "$1" ] && exit 46; mkdir -p -- "$2" || exit 1; [ -w "$2" ] || exit 47';
const COMMIT = [
  "t=$1; tmp=$2; keep=$3",
  // The old file's permission and sticky bits, never its set-ID bits (as the helper's write, files.go).
  'if [ "$keep" = 1 ] && [ -e "$t" ]; then { chmod --reference="$t" -- "$tmp" && chmod ug-s -- "$tmp"; } || { rm -f -- "$tmp"; exit 1; }; fi',
  'mv -f -- "$tmp" "$t" || { rm -f -- "$tmp"; exit 1; }',
].join("\n");

/**
 * See Sandbox.writeFile. Rejects InvalidArgumentError (bad mode, target is a directory),
 * PermissionDeniedError (a directory the sandbox user may not write), SandboxError.
 */
export async function writeFileAtomic(
  container: Docker.Container,
  path: string,
  data: Buffer,
  uid: number,
  options: { mode?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const target = containerPath(path);
  const mode = options.mode;
  checkFileMode(mode);
  const dir = posix.dirname(target);
  const prep = await captureExec(container, ["sh", "-c", PREPARE, "write", target, dir], {
    ...omitUndefined({ signal: options.signal }),
  });
  checkExit(prep, target, "preparing the directory of");
  throwIfAborted(options.signal);
  const tmpName = `.warden-tmp-${randomBytes(8).toString("hex")}`;
  const pack = tar.pack();
  pack.entry(
    { name: tmpName, size: data.length, mode: mode ?? 0o644, ...tarOwner(uid, uid), mtime: new Date() },
    data,
  );
  pack.finalize();
  try {
    await container.putArchive(toNodeStream(pack), { path: dir });
  } catch (err) {
    throw fromDockerError(err, { what: `writing ${target}`, containerId: container.id });
  }
  const keep = mode === undefined ? "1" : "0";
  const commit = await captureExec(container, [
    "sh",
    "-c",
    COMMIT,
    "write",
    target,
    posix.join(dir, tmpName),
    keep,
  ]);
  checkExit(commit, target, "writing");
}
