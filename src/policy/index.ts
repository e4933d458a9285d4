/**
 * Allow / ask / deny policies: loading and validating policy files, bash analysis, evaluation, and
 * the beforeToolCall hook that enforces them: it asks an ApprovalProvider (approver.ts; the providers
 * are in src/approval) and writes src/audit's line.
 */
export type {
  ApprovalAnswer,
  ApprovalProvider,
  ApprovalRequest,
  NetworkApprovalSubject,
} from "./approver.js";
export { analyzeBash, MAX_SYNTAX_DEPTH } from "./bash/analyze.js";
export { DANGEROUS_VARIABLES } from "./bash/dangerous-variables.js";
export { loadBashParser } from "./bash/parser-ready.js";
export type { BashPart } from "./bash/parts.js";
export {
  CommandTooLongError,
  DEFAULT_MAX_COMMAND_BYTES,
} from "./command-limit.js";
export { type ArgWord, matchCommand, patternWords } from "./command-pattern.js";
export { evaluate, lexicalContext } from "./evaluate.js";
export { matchGlob } from "./glob.js";
export {
  createPolicyHook,
  createPolicyHookFromFiles,
  DEFAULT_APPROVAL_TIMEOUT_MS,
} from "./hook.js";
export { loadPolicy, parsePolicyText } from "./load.js";
export { judge, ruleMatches, type Subject } from "./match.js";
export {
  networkApprovalRequest,
  networkApprover,
} from "./network-approval.js";
export {
  effectiveNetworkRules,
  networkSectionRules,
} from "./network-section.js";
export {
  ALLOW_ALL_POLICY,
  DEFAULT_POLICY_FILE,
  isPolicyRecord,
  type PolicyRecord,
  RecordedPolicyChangedError,
  recheckPolicyFiles,
  recordPolicyFiles,
} from "./policy-record.js";
export { runPolicyTests } from "./policy-tests.js";
export {
  effectiveSecretBindings,
  hostIntersection,
  intersectSecretBindings,
} from "./secrets-section.js";
export * from "./types.js";
