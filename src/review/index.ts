/**
 * Review before the host is touched: what a copy-mode run changed (files, diffstat, patch), applying it
 * to the host only when the host did not change meanwhile, and showing a saved session's change again.
 */
export { type ApplyResult, applyChanges, MergeConflictError } from "./apply.js";
export { applyRefusal, splitApplicable } from "./apply-rule.js";
export { collectChanges, type FileChange } from "./changes.js";
export { colourPatch } from "./colour.js";
export { computeDiffstat, formatDiffstat } from "./diffstat.js";
export { gitBlobId, NULL_OID } from "./git-binary.js";
export { hostPathFor } from "./host-paths.js";
export {
  type HostBase,
  type HostSnapshot,
  snapshotHost,
} from "./host-snapshot.js";
export {
  GIT_DIR_REASON,
  gitIgnoreMatcher,
  isGitControlPath,
} from "./ignored.js";
export { mergeFile } from "./merge.js";
export {
  formatPatch,
  patchChanges,
} from "./patch.js";
export { formatPatchBytes } from "./patch-bytes.js";
export {
  changesFromPatch,
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
  type WorkspaceRecord,
  workspaceHeader,
  workspaceRecordOf,
} from "./workspace-record.js";
