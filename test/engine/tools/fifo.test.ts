/**
 * A FIFO in the workspace does not stall the session's file operations. The helper used to open a
 * file before it checked its type, so a read of a FIFO nobody writes to blocked in open(2) for
 * ever: each call failed after its 30 s timeout, but the blocked open kept one of the helper's 8
 * file-operation slots, and after 8 of them every later read, stat or realpath of the session was
 * refused. It now opens without blocking and refuses what is not a regular file at once
 * (images/sandbox/helper/open.go). On both backends (test/helpers/backend.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Session } from "../../../src/session/index.js";
import type { ToolCall } from "../../../src/tools/types.js";
import { backendLeftovers, createTestSession, describeBackend } from "../../helpers/backend.js";

const TENANT = "test-tools-fifo";

describeBackend("a FIFO in the workspace", () => {
  let session: Session;

  beforeAll(async () => {
    session = await createTestSession({ tenant: TENANT });
  });
  afterAll(async () => {
    await session?.close();
    expect(await backendLeftovers(TENANT)).toEqual([]);
  });

  it("a batch of 8 reads of a FIFO fails at once with the non-regular-file error; a read right after works", async () => {
    const setup = await session.runToolCalls([
      { id: "mk", name: "bash", arguments: { command: "mkfifo f && echo hello > a.txt" } },
    ]);
    expect(setup.map((r) => r.isError)).toEqual([false]);
    const reads: ToolCall[] = Array.from({ length: 8 }, (_, i) => ({
      id: `r${i}`,
      name: "read",
      arguments: { path: "f" },
    }));
    // A read that blocked on the FIFO would never return: the test's timeout, not a budget, bounds it.
    const results = await session.runToolCalls(reads);
    expect(results.map((r) => [r.toolCallId, r.isError, r.content])).toEqual(
      reads.map((c) => [
        c.id,
        true,
        [{ type: "text", text: "reading /workspace/f: /workspace/f is not a regular file." }],
      ]),
    );
    const after = await session.runToolCalls([{ id: "ok", name: "read", arguments: { path: "a.txt" } }]);
    expect(after.map((r) => [r.isError, r.content[0]])).toEqual([[false, { type: "text", text: "hello\n" }]]);
  });
});
