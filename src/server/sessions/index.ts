/**
 * The server's sessions: the registry of live sessions and the operations on them (create, run a
 * batch, close, reap), the state they share (SessionContext), the records, approvals, policy hooks
 * and in-flight journal they use; the session factory over the SandboxBackend and start-up
 * reconciliation.
 */

export { ApprovalBroker } from "./approval-broker.js";
export { closeAllSessions, closeSession, reapSessions } from "./close.js";
export { type SessionContext, sessionContext } from "./context.js";
export { createSession, reserveSession } from "./create.js";
export { InflightCalls } from "./inflight-calls.js";
export { createPolicyHookFactory, type HookFactory } from "./policy-hooks.js";
export { poolState } from "./pool-state.js";
export { type ReconcileReport, reconcile } from "./reconcile.js";
export { reconcileLine } from "./reconcile-line.js";
export { RecordStore } from "./record-store.js";
export type { LiveSession } from "./registry.js";
export { type CreateSessionInput, resolveSessionRequest } from "./request.js";
export { RunningCalls } from "./running-calls.js";
export { type SessionFactory, sessionFactory } from "./session-factory.js";
export { runToolCalls } from "./tool-calls.js";
export { unpackWorkspaceTar, uploadsDirOf } from "./upload.js";
