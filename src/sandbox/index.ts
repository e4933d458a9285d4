/**
 * The sandbox's public surface: create a sandbox, its defaults, the engine helpers, image build,
 * gc, and the interface types. Everything else in this folder is internal, but for the Kubernetes
 * backend, whose surface is kubernetes/index.ts: it is kept out of this index so that the types of
 * warden's public API (src/index.ts) never name @kubernetes/client-node, an optional package.
 */

export type * from "./backend.js";
export {
  type BackendConfig,
  BackendConfigSchema,
  backendWorkspaceModes,
  openSandboxBackend,
  type ResolvedBackendConfig,
  resolveBackendConfig,
} from "./backends.js";
export {
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  outputShare,
} from "./channel/index.js";
export { channelEventLine } from "./channel-event.js";
export { dockerBackend } from "./docker/backend.js";
export { createSandbox } from "./docker/create.js";
export { removeSandboxResources } from "./docker/docker-sandbox.js";
export { getDocker, imageExists } from "./docker/engine.js";
export { type GcRemoval, gc, removeUnusedSocketDirs } from "./docker/gc.js";
export {
  buildGatewayImage,
  buildSandboxImage,
  listSandboxImages,
} from "./docker/images.js";
export { dockerPoolBackend, POOL_LABEL } from "./docker/pool.js";

export { controllerId, controllerProcessAlive, LABEL } from "./labels.js";
export {
  DEFAULT_LIMITS,
  HELPER_PIDS_RESERVE,
  minPidsFor,
  PIDS_PER_CONCURRENT_CALL,
  pidsBudgetText,
  resolveLimits,
} from "./limits.js";
export { compareListingNames } from "./listing.js";

export {
  DEFAULT_IMAGE,
  type ResolvedSandboxOptions,
  resolveSandboxOptions,
} from "./options.js";
export * from "./pool/index.js";
export {
  RW_SANDBOX_UID,
  SANDBOX_UID_END,
  SANDBOX_UID_MIN,
} from "./sandbox-uid.js";

export * from "./types.js";

export { excludeMatcher } from "./workspace-exclude.js";
