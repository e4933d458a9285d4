/**
 * Review before the host is touched: what a copy-mode run changed (files, diffstat, patch), applying it
 * to the host only when the host did not change meanwhile, and showing a saved session's change again.
 */
export { type ApplyResult, applyChanges, HostChangedError } from "./apply.js";
export { collectChanges, type FileChange, MAX_REVIEW_FILE_BYTES } from "./changes.js";
export { colourPatch } from "./colour.js";
export { computeDiffstat, type Diffstat, type DiffstatFile, formatDiffstat } from "./diffstat.js";
export { binaryPatchBody, gitBlobId, NULL_OID } from "./git-binary.js";
export { hostPathFor } from "./host-paths.js";
export { type HostSnapshot, hashHostPath, snapshotHost } from "./host-snapshot.js";
export {
  type FilePatch,
  formatPatch,
  isBinary,
  patchableChanges,
  patchChanges,
  patchFile,
} from "./patch.js";
