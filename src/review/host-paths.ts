/** Mapping workspace-relative paths to host paths, confined to the host workspace. */
import { isAbsolute, relative, resolve } from "node:path";
import { PathOutsideWorkspaceError } from "../errors.js";

/**
 * The host path of a workspace-relative POSIX path. Throws PathOutsideWorkspaceError when the path
 * is absolute or climbs out of `root` (`..`), so a crafted name can never address the host elsewhere.
 */
export function hostPathFor(root: string, path: string): string {
  const absolute = resolve(root, path);
  const rel = relative(resolve(root), absolute);
  if (isAbsolute(path) || rel === "" || rel === ".." || rel.startsWith("../") || isAbsolute(rel)) {
    throw new PathOutsideWorkspaceError(path, absolute);
  }
  return absolute;
}
