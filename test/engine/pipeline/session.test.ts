/**
 * The pipeline on a real session: case 14 (parallel edits of one file), hooks, abort, close. On
 * both backends (test/helpers/backend.ts): a container, or a Pod under `npm run test:k8s`.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BeforeToolCallHook } from "../../../src/pipeline/types.js";
import type { Session } from "../../../src/session/index.js";
import type { ToolCall } from "../../../src/tools/types.js";
import { backendLeftovers, createTestSession, describeBackend } from "../../helpers/backend.js";

const SEQ_1_100 = `${Array.from({ length: 100 }, (_, i) => String(i + 1)).join("\n")}\n`;

describeBackend("pipeline on a real session", () => {
  let session: Session;
  const hookCalls: string[] = [];
  const denyEtc: BeforeToolCallHook = async (ctx) => {
    hookCalls.push(ctx.call.id);
    const path = (ctx.args as { path?: string }).path;
    return path === "blocked.txt"
      ? { block: true, reason: "blocked.txt is off limits (test hook)" }
      : undefined;
  };

  beforeAll(async () => {
    session = await createTestSession({ tenant: "test-pipeline", beforeToolCall: [denyEtc] });
  });
  afterAll(async () => {
    await session?.close();
  });

  const read = async (path: string): Promise<string> =>
    (await session.sandbox.readFile(path, { kind: "bytes", offset: 0, length: 1 << 20 })).data.toString(
      "utf8",
    );

  it("case 14: two parallel edits of n.txt, 50 repetitions: both changes present in 100 lines, never a lost update", async () => {
    // 50 copies of `seq 1 100`, one per repetition; repetitions run 10 at a time (each is one batch).
    const setup = await session.sandbox.exec({ shell: "for i in $(seq 0 49); do seq 1 100 > n$i.txt; done" });
    expect(setup.exitCode).toBe(0);
    const edits = (run: number): ToolCall[] => [
      {
        id: `a${run}`,
        name: "edit",
        arguments: { path: `n${run}.txt`, oldText: "50\n", newText: "FIFTY\n" },
      },
      {
        id: `b${run}`,
        name: "edit",
        arguments: { path: `n${run}.txt`, oldText: "75\n", newText: "SEVENTY-FIVE\n" },
      },
    ];
    for (let wave = 0; wave < 5; wave++) {
      const runs = Array.from({ length: 10 }, (_, k) => wave * 10 + k);
      const batches = await Promise.all(runs.map((run) => session.runToolCalls(edits(run))));
      expect(batches.map((results) => results.map((r) => [r.toolCallId, r.isError]))).toEqual(
        runs.map((run) => [
          [`a${run}`, false],
          [`b${run}`, false],
        ]),
      );
    }
    const expected = SEQ_1_100.replace("\n50\n", "\nFIFTY\n").replace("\n75\n", "\nSEVENTY-FIVE\n");
    expect(expected.split("\n").length - 1).toBe(100);
    for (let run = 0; run < 50; run++) expect(await read(`n${run}.txt`)).toBe(expected);
  }, 1_200_000);

  it("serialises edits that reach one file through a symlink (canonical key inside the sandbox)", async () => {
    await session.sandbox.writeFile("real.txt", Buffer.from("one\ntwo\n"));
    const linked = await session.sandbox.exec({ argv: ["ln", "-sf", "real.txt", "/workspace/alias.txt"] });
    expect(linked.exitCode).toBe(0);
    const results = await session.runToolCalls([
      { id: "x", name: "edit", arguments: { path: "real.txt", edits: [{ oldText: "one", newText: "ONE" }] } },
      {
        id: "y",
        name: "edit",
        arguments: { path: "alias.txt", edits: [{ oldText: "two", newText: "TWO" }] },
      },
    ]);
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    expect(await read("real.txt")).toBe("ONE\nTWO\n");
  });

  // Pi serialises only edit and write, so a read in the same batch would race them: it reads next batch.
  it("four writes of one file under four spellings, then a read, 100 repetitions: always the fourth write", async () => {
    const setup = await session.sandbox.exec({
      shell: "cd /workspace && : > w.txt && ln -sfn w.txt w-alias.txt && ln -sfn /workspace w-dir",
    });
    expect(setup.exitCode).toBe(0);
    const spellings = ["w.txt", "./w.txt", "w-alias.txt", "w-dir/w.txt"];
    const seen: string[] = [];
    for (let run = 0; run < 100; run++) {
      const writes = spellings.map((path, k) => ({
        id: `w${run}-${k + 1}`,
        name: "write",
        arguments: { path, content: `run ${run} write ${k + 1}\n` },
      }));
      const written = await session.runToolCalls(writes);
      expect(written.map((r) => [r.toolCallId, r.isError])).toEqual(writes.map((w) => [w.id, false]));
      const [read] = await session.runToolCalls([
        { id: `r${run}`, name: "read", arguments: { path: "w.txt" } },
      ]);
      seen.push((read?.content[0] as { text?: string } | undefined)?.text ?? "(no result)");
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, run) => `run ${run} write 4\n`));
    expect(await session.sandbox.realpath("w-alias.txt")).toBe("/workspace/w.txt");
  }, 600_000);

  it("three dependent edits of one file in one batch (via a symlink too), 100 repetitions: all apply in order", async () => {
    await session.sandbox.writeFile("e.txt", Buffer.from("one 0\n"));
    const linked = await session.sandbox.exec({ argv: ["ln", "-sfn", "e.txt", "/workspace/e-alias.txt"] });
    expect(linked.exitCode).toBe(0);
    const edit = (id: string, path: string, oldText: string, newText: string): ToolCall => ({
      id,
      name: "edit",
      arguments: { path, edits: [{ oldText, newText }] },
    });
    for (let run = 0; run < 100; run++) {
      // Each edit needs the text the previous one wrote; the last one sets up the next repetition.
      const results = await session.runToolCalls([
        edit(`a${run}`, "e.txt", `one ${run}\n`, `two ${run}\n`),
        edit(`b${run}`, "e-alias.txt", `two ${run}\n`, `three ${run}\n`),
        edit(`c${run}`, "./e.txt", `three ${run}\n`, `one ${run + 1}\n`),
      ]);
      expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
        [`a${run}`, false],
        [`b${run}`, false],
        [`c${run}`, false],
      ]);
    }
    expect(await read("e.txt")).toBe("one 100\n");
  }, 600_000);

  it("blocks a call through the beforeToolCall hook; nothing is written", async () => {
    const [result] = await session.runToolCalls([
      { id: "w1", name: "write", arguments: { path: "blocked.txt", content: "x" } },
    ]);
    expect(result).toMatchObject({
      toolCallId: "w1",
      isError: true,
      content: [{ type: "text", text: "blocked.txt is off limits (test hook)" }],
    });
    expect(await session.sandbox.stat("blocked.txt")).toBeNull();
    expect(hookCalls).toContain("w1");
  });

  it("aborts a running bash call and gives the unstarted ones 'Operation aborted'", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1500);
    const results = await session.runToolCalls(
      [
        { id: "s1", name: "bash", arguments: { command: "echo begun; sleep 60" } },
        { id: "s2", name: "bash", arguments: { command: "sleep 60" } },
      ],
      { signal: controller.signal },
    );
    // Had the abort not ended them, both sleeps would have succeeded (isError false).
    expect(results.map((r) => r.isError)).toEqual([true, true]);
  });

  it("lists the seven built-in tools in the provider schema", () => {
    expect(session.enabledTools).toEqual(["read", "bash", "edit", "write", "grep", "find", "ls"]);
    expect(session.providerTools().map((t) => t.function.name)).toEqual(session.enabledTools);
    const edit = session.providerTools().find((t) => t.function.name === "edit");
    expect(edit?.function.parameters).toMatchObject({ type: "object", required: ["path", "edits"] });
  });
});

describeBackend("session lifecycle", () => {
  it("close() removes the container and is idempotent; calls afterwards are error results", async () => {
    const tenant = `test-pipeline-close-${process.pid}`;
    const session = await createTestSession({ tenant, toolSelection: { tools: ["bash"] } });
    expect(session.enabledTools).toEqual(["bash"]);
    const [ok] = await session.runToolCalls([{ id: "1", name: "bash", arguments: { command: "echo ok" } }]);
    expect(ok?.content).toEqual([{ type: "text", text: "ok\n" }]);
    await session.close();
    expect(await backendLeftovers(tenant)).toEqual([]);
    await session.close();
    const [after] = await session.runToolCalls([{ id: "2", name: "bash", arguments: { command: "true" } }]);
    expect(after?.isError).toBe(true);
  });
});
