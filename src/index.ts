/**
 * warden's public API, listed name by name (everything else is internal and may change):
 * - sessions: createSession, the Session it returns, and its options (workspace, limits, tools, hooks);
 * - tools: the seven built-in tools' factories and the tool / call / result types;
 * - hooks: the beforeToolCall / afterToolCall hook types and the tool execution events;
 * - policy and approval: loading policy files, the policy hook, approval providers;
 * - review: a copy-mode session's changes, the patch, and applying it as a three-way merge;
 * - sandbox: the Sandbox interface, createSandbox, image build, gc;
 * - background processes: openProcesses over a sandbox, and the Processes it returns;
 * - errors: WardenError and its subclasses (stable `code`), AbortError.
 * README.md and docs/library.md show the use; test/package packs, installs and compiles it as a consumer would.
 */

// Policy and approval
export { NonInteractiveApproval, ProgrammaticApproval, TerminalApproval } from "./approval/index.js";
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
  SecretBinding,
  SecretRefusal,
  SecretUseAudit,
  SecretValueSource,
  SessionSecret,
} from "./egress/index.js";
// Network egress
export { parseAllowNet } from "./egress/index.js";
// Errors
export {
  EngineUnreachableError,
  type FieldProblem,
  ImageMissingError,
  InvalidArgumentError,
  NoRoomError,
  NotFoundError,
  PathOutsideWorkspaceError,
  PermissionDeniedError,
  PolicyInvalidError,
  SandboxError,
  SandboxNotRunningError,
  WardenError,
  type WardenErrorCode,
} from "./errors.js";
// Hooks and events
export type {
  AfterToolCallContext,
  AfterToolCallHook,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallHook,
  BeforeToolCallResult,
  CallDecision,
  ProviderTool,
  RunToolCallsOptions,
  ToolExecutionEvent,
  ToolSelection,
} from "./pipeline/index.js";
export type {
  ApprovalAnswer,
  ApprovalProvider,
  ApprovalRequest,
  Decision,
  NetworkApprovalSubject,
  Policy,
  PolicyDecisionKind,
  PolicyRequest,
} from "./policy/index.js";
export {
  createPolicyHook,
  createPolicyHookFromFiles,
  DEFAULT_POLICY_FILE,
  effectiveSecretBindings,
  evaluate,
  loadPolicy,
  networkApprover,
} from "./policy/index.js";
// Background processes
export type {
  OutputSlice,
  Processes,
  ProcessesOptions,
  ProcessInfo,
  ProcessLimits,
  ProcessRecord,
  ProcessSignal,
  StartProcessOptions,
  TerminalSize,
} from "./process/index.js";
export { openProcesses } from "./process/index.js";
// Review (copy mode)
export {
  type ApplyResult,
  applyChanges,
  collectChanges,
  type FileChange,
  formatPatch,
  type HostBase,
  type HostSnapshot,
  MergeConflictError,
  snapshotHost,
} from "./review/index.js";
export type {
  ExecCommand,
  ExecOptions,
  ExecResult,
  ReadOnlyMount,
  Sandbox,
  SandboxIdentity,
  SandboxLimits,
  SandboxOptions,
  SandboxSpec,
  WorkspaceMode,
} from "./sandbox/index.js";
// Sandbox
export {
  buildGatewayImage,
  buildSandboxImage,
  createSandbox,
  DEFAULT_IMAGE,
  DEFAULT_LIMITS,
  gc,
  WORKSPACE_DIR,
} from "./sandbox/index.js";
export type { Session, SessionOptions } from "./session/index.js";
// Sessions
export { createSession } from "./session/index.js";
export type {
  AnyTool,
  ImageContent,
  TextContent,
  Tool,
  ToolCall,
  ToolContent,
  ToolContext,
  ToolOutput,
  ToolResultMessage,
} from "./tools/index.js";
// Tools
export {
  builtinTools,
  createBashTool,
  createEditTool,
  createFindTool,
  createGrepTool,
  createLsTool,
  createReadTool,
  createWriteTool,
} from "./tools/index.js";
export { AbortError, isAbortError } from "./util/index.js";
