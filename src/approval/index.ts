/** Approval providers for `ask` decisions. */
export { NonInteractiveApproval } from "./non-interactive.js";
export { type PendingApproval, ProgrammaticApproval } from "./programmatic.js";
export { describeRequest, parseAnswer, TerminalApproval, type TerminalApprovalOptions } from "./terminal.js";
export type { ApprovalAnswer, ApprovalProvider, ApprovalRequest, Decider } from "./types.js";
