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
export { type BashPart, renderArgv } from "./bash/parts.js";
export {
  CommandTooLongError,
  checkCommandSize,
  DEFAULT_MAX_COMMAND_BYTES,
  maxCommandBytes,
} from "./command-limit.js";
export { type ArgWord, type MatchMode, matchCommand, patternWords } from "./command-pattern.js";
export { evaluate, lexicalContext, PATH_TOOLS } from "./evaluate.js";
export { compileGlob, matchGlob } from "./glob.js";
export {
  createPolicyHook,
  createPolicyHookFromFiles,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  type PolicyHookFromFilesOptions,
  type PolicyHookOptions,
  refusalReason,
} from "./hook.js";
export { loadPolicy, parsePolicyText } from "./load.js";
export { judge, ruleMatches, type Subject } from "./match.js";
export {
  type NetworkApproverContext,
  networkApprovalRequest,
  networkApprover,
} from "./network-approval.js";
export {
  effectiveNetworkRules,
  type NetworkSection,
  NetworkSectionSchema,
  networkSectionRules,
} from "./network-section.js";
export {
  ALLOW_ALL_POLICY,
  DEFAULT_POLICY_FILE,
  isPolicyRecord,
  type PolicyFileRecord,
  type PolicyRecord,
  policyDigest,
  RecordedPolicyChangedError,
  type RecordedPolicyCheck,
  recheckPolicyFiles,
  recordPolicyFiles,
} from "./policy-record.js";
export { type PolicyTestFailure, type PolicyTestReport, runPolicyTests } from "./policy-tests.js";
export * from "./types.js";
