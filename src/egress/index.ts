/**
 * Controlled network egress (docs/network.md): rule parsing and matching, the per-session
 * Squid gateway, and its audit records.
 */
export { parseAccessLine } from "./access-log.js";
export { type AdoptedEgress, adoptEgressGateway } from "./adopt.js";
export {
  ASK_PREFIX,
  type AskQuestion,
  AskRelay,
  askAllowed,
  DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS,
  formatAskAnswer,
  parseAskQuestion,
} from "./ask-relay.js";
export { AuditLimiter, DEFAULT_AUDIT_LIMIT } from "./audit-limit.js";
export {
  type AllowlistOptions,
  CA_BUNDLE_PATH,
  type EgressGateway,
  sandboxNetworkConfig,
  startEgressGateway,
} from "./gateway.js";
export { GATEWAY_IMAGE, ROLE_LABEL, removeEgressResources, SESSION_LABEL } from "./gateway-container.js";
export { type EgressRemoval, ORPHAN_GRACE_MS, removeEgressWhere, sweepEgress } from "./gc.js";
export {
  DEFAULT_PORTS,
  decideConnection,
  hostMatches,
  networkPolicyKey,
  parseAllowNet,
  parseHostEntry,
  ruleName,
} from "./host-pattern.js";
export { resolveNetworkOptions } from "./network-options.js";
export { REFUSED_RANGES } from "./refused-addresses.js";
export { squidConfig } from "./squid-config.js";
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
} from "./types.js";
