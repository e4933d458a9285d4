/** The audit log of policy decisions. */
export { type AuditLog, type AuditRecord, createAuditLog, digestArgs } from "./policy-audit-log.js";
