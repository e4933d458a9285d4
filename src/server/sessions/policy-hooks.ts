/**
 * The server's hook factory: each tenant's policy layer files (src/policy, loaded once at start so a
 * bad file stops the server before it listens) enforced by createPolicyHook, with `ask` going to the
 * server's programmatic approvals (answered over HTTP by the same tenant). The hook reports its
 * decision on the call itself (BeforeToolCallContext.noteDecision); the session manager writes it in
 * the call's audit line (tenant, session, tool, decision, rule, decider) from the call's end event.
 */
import type { AfterToolCallHook, BeforeToolCallHook } from "../../pipeline/index.js";
import { createPolicyHook, loadPolicy, type Policy } from "../../policy/index.js";
import type { ServerConfig, TenantConfig } from "../config/index.js";
import type { ApprovalBroker } from "./approval-broker.js";

/**
 * What a hook factory gets to build a session's hooks. A hook reports its decision on a call through
 * the pipeline (BeforeToolCallContext.noteDecision); it reaches the call's audit line and metrics on
 * the call's end event.
 */
interface HookContext {
  tenant: TenantConfig;
  sessionId: string;
  approvals: ApprovalBroker;
}

/** Builds a session's policy hooks (src/policy + the approval broker); none when absent. */
export type HookFactory = (
  ctx: HookContext,
) => Promise<{ beforeToolCall?: BeforeToolCallHook[]; afterToolCall?: AfterToolCallHook[] }>;

/**
 * Loads every tenant's policy. Asks wait `options.approvalTimeoutMs`, else `config.approvalTimeoutMs`.
 * Rejects PolicyInvalidError naming file, line and column.
 */
export async function createPolicyHookFactory(
  config: ServerConfig,
  options: { approvalTimeoutMs?: number } = {},
): Promise<HookFactory> {
  const policies = new Map<string, Policy>();
  for (const tenant of config.tenants) {
    if (tenant.policy.length > 0) policies.set(tenant.id, await loadPolicy(tenant.policy));
  }
  return async ({ tenant, sessionId, approvals }) => {
    const policy = policies.get(tenant.id);
    if (!policy) return {};
    const hook = createPolicyHook({
      policy,
      approval: approvals.provider,
      sessionId,
      tenant: tenant.id,
      owner: tenant.id,
      approvalTimeoutMs: options.approvalTimeoutMs ?? config.approvalTimeoutMs,
    });
    return { beforeToolCall: [hook] };
  };
}
