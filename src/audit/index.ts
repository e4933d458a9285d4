/**
 * The audit log of policy decisions, and the pure parts of the server audit log's hash chain:
 * line format, links, signed checkpoints, verification and the OCSF export mapping.
 */
export {
  type ChainLink,
  ChainState,
  formatAuditLine,
  GENESIS_HASH,
  lineHash,
  linksOf,
  type StreamHead,
  streamsOf,
} from "./chain.js";
export { AuditChainWriter, type AuditChainWriterOptions } from "./chain-writer.js";
export {
  assertEd25519,
  auditKeyId,
  CHECKPOINT_PAYLOAD_TAG,
  checkpointPayload,
  checkpointSignatureValid,
  signCheckpoint,
} from "./checkpoint.js";
export { OCSF_VERSION, type OcsfEvent, toOcsf } from "./ocsf.js";
export {
  createPolicyAuditLog,
  digestArgs,
  type PolicyAuditLog,
  type PolicyAuditRecord,
} from "./policy-audit-log.js";
export {
  type AuditFault,
  type AuditFaultKind,
  type AuditStreamSummary,
  type AuditVerifyOptions,
  type AuditVerifyReport,
  verifyAuditLines,
} from "./verify.js";
export { formatVerifyReport } from "./verify-report.js";
