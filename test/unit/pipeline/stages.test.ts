import { describe, expect, it } from "vitest";
import { NotFoundError } from "../../../src/errors.js";
import {
  checkNotAborted,
  executeTool,
  lookupTool,
  prepareToolArguments,
  runAfterToolCallHooks,
  runBeforeToolCallHooks,
  validateArguments,
} from "../../../src/pipeline/index.js";
import type { BeforeToolCallHook } from "../../../src/pipeline/types.js";
import type { ToolCall } from "../../../src/tools/types.js";
import { AbortError } from "../../../src/util/abort.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { echoTool, fakeSpill } from "../../helpers/pipeline-fakes.js";

const call: ToolCall = { id: "c1", name: "echo", arguments: { text: "hi" } };
const env = { sandbox: new FakeSandbox(), sessionId: "s1" };
const textOf = (r: { content: { type: string; text?: string }[] }): string | undefined => r.content[0]?.text;

describe("lookupTool", () => {
  it("finds a tool by exact name", () => {
    const tool = echoTool();
    expect(lookupTool(call, new Map([["echo", tool]]))).toEqual({ ok: true, value: tool });
  });

  it("misses with Pi's text 'Tool <name> not found' as an isError result", () => {
    const outcome = lookupTool({ ...call, name: "Echo" }, new Map([["echo", echoTool()]]));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.result).toMatchObject({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "Echo",
      content: [{ type: "text", text: "Tool Echo not found" }],
      details: { stage: "lookup", code: "NOT_FOUND" },
      isError: true,
    });
  });
});

describe("prepareToolArguments", () => {
  it("passes raw arguments through when the tool has no prepareArguments", () => {
    expect(prepareToolArguments(call, echoTool())).toEqual({ ok: true, value: { text: "hi" } });
  });

  it("reshapes legacy arguments", () => {
    const tool = echoTool({ prepareArguments: (raw) => ({ text: (raw as { t: string }).t }) });
    expect(prepareToolArguments({ ...call, arguments: { t: "x" } }, tool)).toEqual({
      ok: true,
      value: { text: "x" },
    });
  });

  it("turns a throw into an error result", () => {
    const tool = echoTool({
      prepareArguments: () => {
        throw new Error("bad shape");
      },
    });
    const outcome = prepareToolArguments(call, tool);
    expect(outcome.ok ? undefined : textOf(outcome.result)).toBe("bad shape");
  });
});

describe("validateArguments", () => {
  it("ends the call with an INVALID_ARGUMENT error result", () => {
    const outcome = validateArguments(call, echoTool(), {});
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.result.details).toEqual({ stage: "validate", code: "INVALID_ARGUMENT" });
    expect(textOf(outcome.result)).toBe(
      "Validation failed for tool \"echo\":\n  - text: must have required property 'text'\n\nReceived arguments:\n{}",
    );
  });
});

describe("runBeforeToolCallHooks", () => {
  const tool = echoTool();

  it("runs hooks in order and the first block wins", async () => {
    const seen: string[] = [];
    const hooks: BeforeToolCallHook[] = [
      async () => {
        seen.push("a");
        return undefined;
      },
      async () => {
        seen.push("b");
        return { block: true, reason: "denied by rule deny-echo" };
      },
      async () => {
        seen.push("c");
        return { block: true, reason: "never" };
      },
    ];
    const outcome = await runBeforeToolCallHooks(call, tool, { text: "hi" }, hooks, env);
    expect(seen).toEqual(["a", "b"]);
    expect(outcome.ok ? undefined : textOf(outcome.result)).toBe("denied by rule deny-echo");
  });

  it("blocks with Pi's default text when the reason is empty", async () => {
    const outcome = await runBeforeToolCallHooks(
      call,
      tool,
      {},
      [async () => ({ block: true, reason: "" })],
      env,
    );
    expect(outcome.ok ? undefined : textOf(outcome.result)).toBe("Tool execution was blocked");
  });

  it("fails closed: a throwing hook blocks the call", async () => {
    const hooks: BeforeToolCallHook[] = [
      async () => {
        throw new Error("policy file unreadable");
      },
    ];
    const outcome = await runBeforeToolCallHooks(call, tool, { text: "hi" }, hooks, env);
    expect(outcome.ok ? undefined : textOf(outcome.result)).toBe(
      "Tool call blocked: a beforeToolCall hook failed: policy file unreadable",
    );
  });

  it("validates replacement arguments again (unlike Pi)", async () => {
    const hooks: BeforeToolCallHook[] = [async () => ({ args: { text: 42 } })];
    const good = await runBeforeToolCallHooks(call, tool, { text: "hi" }, hooks, env);
    expect(good).toEqual({ ok: true, value: { text: "42" } });
    const bad = await runBeforeToolCallHooks(
      call,
      tool,
      { text: "hi" },
      [async () => ({ args: { nope: 1 } })],
      env,
    );
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.result.details).toEqual({ stage: "beforeToolCall", code: "INVALID_ARGUMENT" });
    expect(
      textOf(bad.result)?.startsWith('Validation failed for tool "echo":\n  - text: must have required'),
    ).toBe(true);
  });

  it("passes each hook the previous hook's replacement", async () => {
    let seen: unknown;
    const hooks: BeforeToolCallHook[] = [
      async () => ({ args: { text: "first" } }),
      async (ctx) => {
        seen = ctx.args;
        return undefined;
      },
    ];
    await runBeforeToolCallHooks(call, tool, { text: "hi" }, hooks, env);
    expect(seen).toEqual({ text: "first" });
  });

  it("gives hooks frozen arguments: an in-place mutation throws and blocks, never reaching execute", async () => {
    const args = { text: "ls" };
    const hooks: BeforeToolCallHook[] = [
      async (ctx) => {
        (ctx.args as { text: string }).text = "rm -rf /";
        return undefined;
      },
    ];
    const outcome = await runBeforeToolCallHooks(call, tool, args, hooks, env);
    expect(outcome.ok).toBe(false);
    expect(args.text).toBe("ls");
  });
});

describe("checkNotAborted", () => {
  it("passes without a fired signal and fails with 'Operation aborted' after abort", () => {
    expect(checkNotAborted(call, new AbortController().signal).ok).toBe(true);
    const outcome = checkNotAborted(call, AbortSignal.abort());
    expect(outcome.ok ? undefined : textOf(outcome.result)).toBe("Operation aborted");
  });
});

describe("executeTool", () => {
  const ctx = { sandbox: new FakeSandbox(), spill: fakeSpill() };

  it("returns the tool's output", async () => {
    const outcome = await executeTool(call, echoTool(), { text: "hi", times: 2 }, ctx);
    expect(outcome).toEqual({
      output: { content: [{ type: "text", text: "hihi" }], details: { length: 2 } },
      isError: false,
    });
  });

  it("keeps a thrown WardenError's code in details", async () => {
    const tool = echoTool({
      execute: async () => {
        throw new NotFoundError("File not found: /workspace/x");
      },
    });
    expect(await executeTool(call, tool, {}, ctx)).toEqual({
      output: {
        content: [{ type: "text", text: "File not found: /workspace/x" }],
        details: { stage: "execute", code: "NOT_FOUND" },
      },
      isError: true,
    });
  });

  it("keeps the details a thrown error carries, such as a failed command's spill file (Pi drops them)", async () => {
    const tool = echoTool({
      execute: async () => {
        throw Object.assign(new Error("boom\n\nCommand exited with code 3"), {
          details: { exitCode: 3, fullOutputPath: "/tmp/spill/bash-1.log", stage: "tool's own" },
        });
      },
    });
    expect(await executeTool(call, tool, {}, ctx)).toEqual({
      output: {
        content: [{ type: "text", text: "boom\n\nCommand exited with code 3" }],
        details: { exitCode: 3, fullOutputPath: "/tmp/spill/bash-1.log", stage: "execute" },
      },
      isError: true,
    });
  });

  it("reports an abort as 'Operation aborted'", async () => {
    const tool = echoTool({
      execute: async () => {
        throw new AbortError("stopped");
      },
    });
    const outcome = await executeTool(call, tool, {}, { ...ctx, signal: AbortSignal.abort() });
    expect(outcome.output.content).toEqual([{ type: "text", text: "Operation aborted" }]);
  });

  it("turns a malformed return value into an error", async () => {
    const tool = echoTool({ execute: async () => ({ text: "no content" }) as never });
    const outcome = await executeTool(call, tool, {}, ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.output.content).toEqual([
      { type: "text", text: "Tool returned a malformed result: expected { content: [...] }." },
    ]);
  });
});

describe("runAfterToolCallHooks", () => {
  const executed = {
    output: { content: [{ type: "text" as const, text: "ok" }], details: { a: 1 } },
    isError: false,
  };

  it("replaces content, details and isError field by field", async () => {
    const outcome = await runAfterToolCallHooks(call, echoTool(), {}, executed, [
      async () => ({ isError: true }),
      async () => ({ details: { b: 2 } }),
    ]);
    expect(outcome).toEqual({
      output: { content: [{ type: "text", text: "ok" }], details: { b: 2 } },
      isError: true,
    });
  });

  it("turns a throwing hook into an error result", async () => {
    const outcome = await runAfterToolCallHooks(call, echoTool(), {}, executed, [
      async () => {
        throw new Error("audit log full");
      },
    ]);
    expect(outcome.isError).toBe(true);
    expect(outcome.output.content).toEqual([
      { type: "text", text: "afterToolCall hook failed: audit log full" },
    ]);
  });
});
