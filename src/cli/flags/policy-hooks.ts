/**
 * POLICY SPOT: how `--policy FILE...` reaches the pipeline for `warden exec` and `warden replay`.
 * The files are loaded by the policy module's `createPolicyHookFromFiles` (src/policy) into one
 * BeforeToolCallHook. Both commands run unattended, so an "ask" decision is answered "deny"
 * (non-interactive approval); `warden run` is where a person approves calls.
 */
import type { BeforeToolCallHook } from "../../pipeline/index.js";
import { createPolicyHookFromFiles } from "../../policy/index.js";

/** The beforeToolCall hooks for `files` in session `sessionId`. Rejects PolicyInvalidError (file:line:column). */
export async function loadPolicyHooks(files: string[], sessionId: string): Promise<BeforeToolCallHook[]> {
  return [await createPolicyHookFromFiles(files, { sessionId, nonInteractive: true })];
}
