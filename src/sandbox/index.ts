/**
 * The sandbox's public surface: create a sandbox, its defaults, the engine helpers, image build,
 * gc, and the interface types. Everything else in this folder is internal, but for the Kubernetes
 * backend, whose surface is kubernetes/index.ts: it is kept out of this index so that the types of
 * warden's public API (src/index.ts) never name @kubernetes/client-node, an optional package.
 */

export type * from "./backend.js";
export { type BackendConfig, openSandboxBackend } from "./backends.js";
export {
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  OutputShare,
  outputShare,
} from "./channel/index.js";
export { type DockerBackendConfig, dockerBackend } from "./docker/backend.js";
export { createSandbox } from "./docker/create.js";
export { DockerSandbox, removeSandboxResources } from "./docker/docker-sandbox.js";
export { getDocker, imageExists, pingEngine, requireImage } from "./docker/engine.js";
export { type GcOptions, type GcRemoval, gc, removeUnusedSocketDirs } from "./docker/gc.js";
export {
  type BuildImageOptions,
  buildGatewayImage,
  buildSandboxImage,
  listSandboxImages,
} from "./docker/images.js";
export { type DockerPoolOptions, dockerPoolBackend, POOL_LABEL } from "./docker/pool.js";
export type { PreparedSandbox } from "./docker/prepare.js";
export { type ExecPath, resolveExecPath } from "./exec-path.js";
export { EXIT_ABORTED, EXIT_TIMEOUT, KILL_GRACE_SECONDS } from "./io-contract.js";
export { controllerId, controllerProcessAlive, LABEL } from "./labels.js";
export {
  DEFAULT_LIMITS,
  HELPER_PIDS_RESERVE,
  minPidsFor,
  PIDS_PER_CONCURRENT_CALL,
  pidsBudgetText,
  resolveLimits,
} from "./limits.js";
export { compareListingNames, type RawListing } from "./listing.js";
export { LISTING_INLINE_MAX_BYTES, ListingSortError, sortListing } from "./listing-sort.js";
export { pickSandboxOptions } from "./option-keys.js";
export {
  DEFAULT_IMAGE,
  DEFAULT_TTL_MS,
  type ResolvedSandboxOptions,
  resolveSandboxOptions,
} from "./options.js";
export * from "./pool/index.js";
export {
  parseSandboxUid,
  RW_SANDBOX_UID,
  SANDBOX_UID_END,
  SANDBOX_UID_MIN,
  UID_LABEL,
} from "./sandbox-uid.js";
export { SPARE_PING_TIMEOUT_MS } from "./spare-ping.js";
export * from "./types.js";
export { packDirectory, type WorkspaceHashes } from "./workspace-copy.js";
export { excludeMatcher } from "./workspace-exclude.js";
