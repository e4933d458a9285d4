/** The audit log of policy decisions. */
export {
  createPolicyAuditLog,
  digestArgs,
  type PolicyAuditLog,
  type PolicyAuditRecord,
} from "./policy-audit-log.js";
