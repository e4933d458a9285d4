/**
 * The audit log of policy decisions, and the pure parts of the server audit log's hash chain:
 * line format, links, signed checkpoints, verification and the OCSF export mapping.
 */
export { ChainState, lineHash, linksOf, streamsOf } from "./chain.js";
export { AuditChainWriter } from "./chain-writer.js";
export { assertEd25519, auditKeyId } from "./checkpoint.js";
export { OCSF_VERSION, toOcsf } from "./ocsf.js";
export {
  createPolicyAuditLog,
  digestArgs,
  type PolicyAuditLog,
  type PolicyAuditRecord,
} from "./policy-audit-log.js";
export { type AuditVerifyReport, verifyAuditLines } from "./verify.js";
export { formatVerifyReport } from "./verify-report.js";
