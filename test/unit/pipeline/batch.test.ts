import { getEventListeners } from "node:events";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { runToolCalls } from "../../../src/pipeline/index.js";
import type { ToolExecutionEvent } from "../../../src/pipeline/types.js";
import type { AnyTool, ToolCall } from "../../../src/tools/types.js";
import { contextWith, echoTool, sleep } from "../../helpers/pipeline-fakes.js";

/** A tool that waits `ms`, logging start/end, honouring abort. */
function waitTool(log: string[], overrides: Partial<AnyTool> = {}): AnyTool {
  return echoTool({
    name: "wait",
    parameters: Type.Object({ ms: Type.Number(), tag: Type.String() }),
    execute: async (_id: string, args: { ms: number; tag: string }, ctx) => {
      log.push(`start ${args.tag}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms);
        ctx.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
        });
      });
      log.push(`end ${args.tag}`);
      return { content: [{ type: "text", text: args.tag }] };
    },
    ...overrides,
  });
}

const waitCall = (id: string, ms: number): ToolCall => ({ id, name: "wait", arguments: { ms, tag: id } });
/**
 * Aborts `controller` once `calls` wait calls have started (logged), not after a fixed delay that a
 * loaded host could spend before the first one starts. Their waits (600 s) outlast the test's timeout.
 */
const abortOnceStarted = async (log: string[], calls: number, controller: AbortController) => {
  await expect.poll(() => log.filter((l) => l.startsWith("start ")).length).toBe(calls);
  controller.abort();
};
const texts = (results: { content: { type: string; text?: string }[] }[]): (string | undefined)[] =>
  results.map((r) => r.content[0]?.text);

describe("runToolCalls", () => {
  it("runs a batch in parallel, returns results in call order and end events in completion order", async () => {
    const log: string[] = [];
    const events: ToolExecutionEvent[] = [];
    const results = await runToolCalls([waitCall("a", 80), waitCall("b", 10)], contextWith([waitTool(log)]), {
      onEvent: (e) => events.push(e),
    });
    expect(texts(results)).toEqual(["a", "b"]);
    expect(log).toEqual(["start a", "start b", "end b", "end a"]);
    expect(events.map((e) => `${e.type} ${e.toolCallId}`)).toEqual([
      "tool_execution_start a",
      "tool_execution_start b",
      "tool_execution_end b",
      "tool_execution_end a",
    ]);
  });

  it("runs the whole batch sequentially when any tool in it is sequential", async () => {
    const log: string[] = [];
    const seq = echoTool({ name: "seq", executionMode: "sequential" });
    const calls = [waitCall("a", 40), { id: "s", name: "seq", arguments: { text: "x" } }, waitCall("b", 5)];
    const results = await runToolCalls(calls, contextWith([waitTool(log), seq]));
    expect(texts(results)).toEqual(["a", "x", "b"]);
    expect(log).toEqual(["start a", "end a", "start b", "end b"]);
  });

  it("turns every failure into an isError result and never throws", async () => {
    const boom = echoTool({
      name: "boom",
      execute: async () => {
        throw new Error("kaput");
      },
    });
    const results = await runToolCalls(
      [
        { id: "1", name: "missing", arguments: {} },
        { id: "2", name: "echo", arguments: { nope: true } },
        { id: "3", name: "boom", arguments: { text: "x" } },
        { id: "4", name: "echo", arguments: { text: "ok" } },
      ],
      contextWith([echoTool(), boom]),
    );
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["1", true],
      ["2", true],
      ["3", true],
      ["4", false],
    ]);
    expect(texts(results)[0]).toBe("Tool missing not found");
    expect(texts(results)[2]).toBe("kaput");
    expect(results[3]).toMatchObject({ role: "toolResult", toolName: "echo", details: { length: 2 } });
    expect(typeof results[3]?.timestamp).toBe("number");
  });

  it("aborts running calls and gives unstarted ones 'Operation aborted'", async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const seq = echoTool({ name: "seq", executionMode: "sequential" });
    const aborting = abortOnceStarted(log, 1, controller);
    const results = await runToolCalls(
      [waitCall("a", 600_000), waitCall("b", 600_000), { id: "s", name: "seq", arguments: { text: "x" } }],
      contextWith([waitTool(log), seq]),
      { signal: controller.signal },
    );
    await aborting;
    expect(texts(results)).toEqual(["Operation aborted", "Operation aborted", "Operation aborted"]);
    expect(log).toEqual(["start a"]);
    expect(results.every((r) => r.isError)).toBe(true);
  });

  it("delivers one abort to every running call of a parallel batch", async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const aborting = abortOnceStarted(log, 2, controller);
    const results = await runToolCalls(
      [waitCall("a", 600_000), waitCall("b", 600_000)],
      contextWith([waitTool(log)]),
      {
        signal: controller.signal,
      },
    );
    await aborting;
    expect(log).toEqual(["start a", "start b"]);
    expect(texts(results)).toEqual(["Operation aborted", "Operation aborted"]);
    expect(results.map((r) => r.details)).toEqual([
      { stage: "execute", code: "ABORTED" },
      { stage: "execute", code: "ABORTED" },
    ]);
  });

  it("never lets a hook's in-place mutation reach execute (Pi shares the args object)", async () => {
    const executed: unknown[] = [];
    const tool = echoTool({
      execute: async (_id: string, args: unknown) => {
        executed.push(args);
        return { content: [{ type: "text", text: "ran" }] };
      },
    });
    const results = await runToolCalls(
      [{ id: "1", name: "echo", arguments: { text: "safe" } }],
      contextWith([tool], {
        beforeToolCall: [
          async (ctx) => {
            (ctx.args as { text: unknown }).text = 12;
            return undefined;
          },
        ],
      }),
    );
    expect(executed).toEqual([]);
    expect(results[0]?.isError).toBe(true);
  });

  it("executes hook-replaced arguments only after validating them again", async () => {
    const executed: unknown[] = [];
    const tool = echoTool({
      execute: async (_id: string, args: unknown) => {
        executed.push(args);
        return { content: [{ type: "text", text: "ran" }] };
      },
    });
    const ctx = contextWith([tool], {
      beforeToolCall: [async () => ({ args: { text: ["not", "a", "string"] } })],
    });
    const results = await runToolCalls([{ id: "1", name: "echo", arguments: { text: "safe" } }], ctx);
    expect(executed).toEqual([]);
    expect(results[0]?.details).toEqual({ stage: "beforeToolCall", code: "INVALID_ARGUMENT" });
  });

  it("throttles updates to at most 10 per second and keeps the trailing one", async () => {
    const tool = echoTool({
      execute: async (_id, _args, ctx) => {
        for (let i = 1; i <= 30; i++) {
          ctx.onUpdate?.({ content: [{ type: "text", text: `u${i}` }] });
          await sleep(10);
        }
        return { content: [{ type: "text", text: "done" }] };
      },
    });
    const updates: string[] = [];
    const started = Date.now();
    await runToolCalls([{ id: "1", name: "echo", arguments: { text: "x" } }], contextWith([tool]), {
      onEvent: (e) => {
        if (e.type === "tool_execution_update") updates.push((e.partial.content[0] as { text: string }).text);
      },
    });
    const elapsedMs = Date.now() - started;
    expect(updates[0]).toBe("u1");
    expect(updates.at(-1)).toBe("u30");
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / 100) + 1);
  });

  it("asks for a batch's decisions together; an allowed call does not wait for another call's answer", async () => {
    const asked: string[] = [];
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const events: string[] = [];
    const ctx = contextWith([echoTool()], {
      beforeToolCall: [
        async ({ call: toolCall }) => {
          asked.push(toolCall.id);
          if (toolCall.id === "ask-1" || toolCall.id === "ask-2") await answered; // a person deciding
          return undefined;
        },
      ],
    });
    const calls = ["ask-1", "allowed", "ask-2"].map((id) => ({ id, name: "echo", arguments: { text: id } }));
    const done = runToolCalls(calls, ctx, {
      onEvent: (e) => {
        events.push(`${e.type} ${e.toolCallId}`);
        if (e.type === "tool_execution_end" && e.toolCallId === "allowed") answer();
      },
    });
    const results = await done;
    // Both asks were put before any answer; the allowed call ended while they waited.
    expect(asked).toEqual(["ask-1", "allowed", "ask-2"]);
    expect(events.indexOf("tool_execution_end allowed")).toBeLessThan(
      events.indexOf("tool_execution_end ask-1"),
    );
    expect(texts(results)).toEqual(["ask-1", "allowed", "ask-2"]);
  });

  it("puts one abort listener on the batch's signal however many calls run, and none once it settles", async () => {
    // Each call of a 16-call batch listens for aborts (as a channel exec does): before, all 16 sat on
    // the batch's signal at once and Node printed MaxListenersExceededWarning (11 listeners).
    const batch = new AbortController();
    const baseline = getEventListeners(batch.signal, "abort").length;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const during: number[] = [];
    const hold = echoTool({
      name: "hold",
      execute: async (_id: string, _args: unknown, ctx) => {
        ctx.signal?.addEventListener("abort", () => {}, { once: true });
        started += 1;
        if (started === 16) {
          during.push(getEventListeners(batch.signal, "abort").length);
          release();
        }
        await gate;
        return { content: [{ type: "text", text: "held" }] };
      },
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    const calls = Array.from({ length: 16 }, (_, i) => ({
      id: `h${i}`,
      name: "hold",
      arguments: { text: "x" },
    }));
    const results = await runToolCalls(calls, contextWith([hold]), { signal: batch.signal });
    await new Promise((resolve) => setImmediate(resolve));
    process.off("warning", onWarning);
    expect(texts(results)).toEqual(Array(16).fill("held"));
    expect(during).toEqual([baseline + 1]);
    expect(getEventListeners(batch.signal, "abort").length).toBe(baseline);
    expect(warnings).toEqual([]);
  });
});
