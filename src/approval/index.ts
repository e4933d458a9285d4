/** Approval providers for `ask` decisions: the ApprovalProvider interface of src/policy/approver.ts, implemented. */
export { NonInteractiveApproval } from "./non-interactive.js";
export { type PendingApproval, ProgrammaticApproval } from "./programmatic.js";
export { describeRequest, parseAnswer, TerminalApproval } from "./terminal.js";
