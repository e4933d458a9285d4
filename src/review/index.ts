/**
 * Review before the host is touched: what a copy-mode run changed (files, diffstat, patch), applying it
 * to the host only when the host did not change meanwhile, and showing a saved session's change again.
 */
export { type ApplyResult, applyChanges, MergeConflictError } from "./apply.js";
export { applyRefusal, OVERSIZE_REASON, splitApplicable } from "./apply-rule.js";
export { collectChanges, type FileChange, MAX_REVIEW_FILE_BYTES, type SessionBase } from "./changes.js";
export { colourPatch } from "./colour.js";
export { computeDiffstat, type Diffstat, type DiffstatFile, formatDiffstat } from "./diffstat.js";
export { binaryPatchBody, gitBlobId, NULL_OID } from "./git-binary.js";
export { hostPathFor } from "./host-paths.js";
export {
  type HostBase,
  type HostSnapshot,
  hashHostPath,
  MAX_BASE_BYTES,
  snapshotHost,
} from "./host-snapshot.js";
export {
  GIT_DIR_REASON,
  gitIgnoreMatcher,
  IGNORED_REASON,
  isGitControlPath,
  splitIgnored,
} from "./ignored.js";
export { GitMissingError, type MergeInput, type MergeOutcome, mergeFile } from "./merge.js";
export {
  type FilePatch,
  formatPatch,
  isBinary,
  patchableChanges,
  patchChanges,
  patchFile,
} from "./patch.js";
export { formatPatchBytes, PATCH_WORKER_MIN_BYTES } from "./patch-bytes.js";
export {
  baseStorePath,
  changesFromPatch,
  type PatchChanges,
  saveBaseStore,
  splitPatch,
} from "./patch-file-apply.js";
export { quotePath, unquotePath } from "./quote-path.js";
export {
  finishReview,
  leftOutOf,
  leftOutPath,
  type ReviewStart,
  type SessionReview,
  saveLeftOut,
  saveSessionPatch,
  startReview,
} from "./session-review.js";
export {
  checkWorkspaceRecord,
  readWorkspaceHeader,
  WORKSPACE_HEADER,
  WorkspaceMovedError,
  type WorkspaceRecord,
  workspaceHeader,
  workspaceRecordOf,
} from "./workspace-record.js";
