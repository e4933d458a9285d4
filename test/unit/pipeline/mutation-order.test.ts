/**
 * Call order of edits and writes in one batch (Pi takes its queue key synchronously as each call
 * starts): the sandbox's realpath answers in reverse call order, yet the mutations of one file, under
 * any spelling, run in call order.
 */
import { posix } from "node:path";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { runToolCalls } from "../../../src/pipeline/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import type { AnyTool, ToolCall } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { contextWith, echoTool } from "../../helpers/pipeline-fakes.js";

const LINKS = { "/workspace/alias.txt": "/workspace/w.txt", "/workspace/dir": "/workspace" };

/** The canonical path of `path` in the fake workspace (LINKS followed), computed synchronously. */
function canonical(path: string): string {
  const resolved = posix.resolve("/workspace", path);
  const dir = posix.dirname(resolved);
  const parent = LINKS[dir as keyof typeof LINKS] ?? dir;
  const full = posix.join(parent, posix.basename(resolved));
  return LINKS[full as keyof typeof LINKS] ?? full;
}

/** A sandbox whose realpath holds every answer until `n` are asked, then answers the last asked first. */
function reverseRealpathSandbox(n: number): Sandbox {
  const held: (() => void)[] = [];
  const sandbox = new FakeSandbox();
  sandbox.realpath = (path) =>
    new Promise<string>((resolve) => {
      held.push(() => resolve(canonical(path)));
      if (held.length === n) for (const answer of held.reverse()) answer();
    });
  return sandbox;
}

/** In-memory write and edit tools; `log` records which call ran, in the order they ran. */
function fileTools(files: Map<string, string>, log: string[]): AnyTool[] {
  const write = echoTool({
    name: "write",
    parameters: Type.Object({ path: Type.String(), content: Type.String() }),
    mutatesPath: (args) => (args as { path: string }).path,
    execute: async (id: string, args: { path: string; content: string }) => {
      log.push(id);
      files.set(canonical(args.path), args.content);
      return { content: [{ type: "text", text: "written" }] };
    },
  });
  const edit = echoTool({
    name: "edit",
    parameters: Type.Object({ path: Type.String(), oldText: Type.String(), newText: Type.String() }),
    mutatesPath: (args) => (args as { path: string }).path,
    execute: async (id: string, args: { path: string; oldText: string; newText: string }) => {
      log.push(id);
      const text = files.get(canonical(args.path)) ?? "";
      if (!text.includes(args.oldText)) throw new Error(`Could not find '${args.oldText}' in ${args.path}`);
      files.set(canonical(args.path), text.replace(args.oldText, args.newText));
      return { content: [{ type: "text", text: "edited" }] };
    },
  });
  return [write, edit];
}

describe("mutations of one file in one batch", () => {
  it("four writes under four spellings land in call order although realpath answers in reverse", async () => {
    const files = new Map<string, string>();
    const log: string[] = [];
    const spellings = ["w.txt", "./w.txt", "alias.txt", "dir/w.txt"];
    const calls: ToolCall[] = spellings.map((path, i) => ({
      id: `w${i + 1}`,
      name: "write",
      arguments: { path, content: `write ${i + 1}` },
    }));
    const ctx = contextWith(fileTools(files, log), { sandbox: reverseRealpathSandbox(4) });
    const results = await runToolCalls(calls, ctx);
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["w1", false],
      ["w2", false],
      ["w3", false],
      ["w4", false],
    ]);
    expect(log).toEqual(["w1", "w2", "w3", "w4"]);
    expect(files.get("/workspace/w.txt")).toBe("write 4");
  });

  it("three dependent edits (each needs the previous one's text) all apply, in call order", async () => {
    const files = new Map([["/workspace/w.txt", "one\n"]]);
    const log: string[] = [];
    const step = (id: string, path: string, oldText: string, newText: string): ToolCall => ({
      id,
      name: "edit",
      arguments: { path, oldText, newText },
    });
    const calls = [
      step("e1", "w.txt", "one", "two"),
      step("e2", "alias.txt", "two", "three"),
      step("e3", "./w.txt", "three", "four"),
    ];
    const ctx = contextWith(fileTools(files, log), { sandbox: reverseRealpathSandbox(3) });
    const results = await runToolCalls(calls, ctx);
    expect(results.map((r) => [r.toolCallId, r.isError, r.content])).toEqual([
      ["e1", false, [{ type: "text", text: "edited" }]],
      ["e2", false, [{ type: "text", text: "edited" }]],
      ["e3", false, [{ type: "text", text: "edited" }]],
    ]);
    expect(log).toEqual(["e1", "e2", "e3"]);
    expect(files.get("/workspace/w.txt")).toBe("four\n");
  });
});
