/**
 * Controlled network egress (docs/network.md): rule parsing and matching, the per-session
 * gateway (images/gateway), and its audit records.
 */

export { type AdoptedEgress, adoptEgressGateway } from "./adopt.js";
export {
  AskRelay,
  formatAskAnswer,
  parseAskQuestion,
} from "./ask-relay.js";
export { AuditLimiter, DEFAULT_AUDIT_LIMIT } from "./audit-limit.js";
export { parseConnectionLine } from "./connection-records.js";
export {
  CA_BUNDLE_PATH,
  type EgressGateway,
  sandboxNetworkConfig,
  startEgressGateway,
} from "./gateway.js";
export { gatewayConfig } from "./gateway-config.js";
export { GATEWAY_IMAGE, ROLE_LABEL, SESSION_LABEL } from "./gateway-container.js";
export { removeEgressWhere, sweepEgress } from "./gc.js";
export {
  decideConnection,
  hostMatches,
  networkPolicyKey,
  parseAllowNet,
  parseHostEntry,
} from "./host-pattern.js";
export { resolveNetworkOptions } from "./network-options.js";

export {
  checkSessionSecrets,
  DEFAULT_SECRET_HEADERS,
  DEFAULT_SECRET_PORTS,
  decideSecretUse,
  FORBIDDEN_SECRET_HEADERS,
  hasDotSegment,
  MAX_SECRET_BYTES,
  parseSecretBinding,
  placeholderEnv,
  SECRET_HEADER_NAME,
  secretHeaderNames,
  secretValueProblem,
} from "./secret-decision.js";
export { formatSecretAnswer, SecretRelay } from "./secret-relay.js";
export {
  placeholderOf,
  SECRET_NAME,
  type SecretBinding,
  type SecretRefusal,
  type SecretValueSource,
  type SessionSecret,
} from "./secrets.js";
export type {
  AskOutcome,
  AuditDropSummary,
  AuditLimit,
  ConnectionAudit,
  GatewayRefusal,
  NetworkApprovalAnswer,
  NetworkApprovalRequest,
  NetworkDecision,
  NetworkOptions,
  NetworkRule,
  SecretUseAudit,
} from "./types.js";
