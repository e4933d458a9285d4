/**
 * warden's side of the differential run: one session (copy mode, the default sandbox image or
 * $WARDEN_PI_IMAGE) on the same starting workspace, each batch through `runToolCalls` as one
 * assistant message's calls, in order.
 */
import { createSession } from "../../src/session/index.js";
import { type CallResult, type CorpusCall, PI_IMAGE } from "./pi-container.js";

/** Runs `batches` in one warden session on a copy of `workspaceDir`; results in call order. */
export async function runWardenBatches(workspaceDir: string, batches: CorpusCall[][]): Promise<CallResult[]> {
  const session = await createSession({
    tenant: "test-pi-fidelity",
    sandbox: { image: PI_IMAGE, workspace: { hostPath: workspaceDir, mode: "copy" } },
  });
  try {
    const results: CallResult[] = [];
    for (const batch of batches) {
      const messages = await session.runToolCalls(batch);
      for (const m of messages) {
        results.push({
          toolCallId: m.toolCallId,
          toolName: m.toolName,
          isError: m.isError,
          content: m.content,
        });
      }
    }
    return results;
  } finally {
    await session.close();
  }
}
