/**
 * The server's hook factory: each tenant's policy layer files (src/policy, loaded once at start so a
 * bad file stops the server before it listens) enforced by createPolicyHook, with `ask` going to the
 * server's programmatic approvals (answered over HTTP by the same tenant). The hook's decision record
 * feeds the server's audit line for the call (tenant, session, tool, rule, decider).
 */
import { createPolicyHook, loadPolicy, type Policy } from "../policy/index.js";
import type { ServerConfig } from "./config.js";
import type { HookFactory } from "./session-manager.js";

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
  return async ({ tenant, sessionId, approvals, noteDecision }) => {
    const policy = policies.get(tenant.id);
    if (!policy) return {};
    const hook = createPolicyHook({
      policy,
      approval: approvals.provider,
      sessionId,
      tenant: tenant.id,
      owner: tenant.id,
      approvalTimeoutMs: options.approvalTimeoutMs ?? config.approvalTimeoutMs,
      audit: {
        record: (r) =>
          noteDecision({
            toolCallId: r.toolCallId ?? "",
            decision: r.decision,
            ...(r.ruleId ? { rule: r.ruleId } : {}),
            decider: r.decider,
          }),
      },
    });
    return { beforeToolCall: [hook] };
  };
}
