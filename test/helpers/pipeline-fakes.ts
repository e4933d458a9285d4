/** Fakes for pipeline unit tests: a spill store, simple tools, a context over the shared FakeSandbox. */
import { Type } from "typebox";
import { FileMutationQueue, type PipelineContext } from "../../src/pipeline/index.js";
import type { AnyTool, SpillStore, ToolOutput } from "../../src/tools/types.js";
import { FakeSandbox } from "./fake-sandbox.js";

export function fakeSpill(): SpillStore {
  return {
    create: () => Promise.reject(new Error("no spill in unit tests")),
    owns: () => false,
    read: () => Promise.reject(new Error("no spill in unit tests")),
    dispose: async () => undefined,
  };
}

export const echoSchema = Type.Object({ text: Type.String(), times: Type.Optional(Type.Number()) });

/** A tool returning its text (repeated `times`); `run` replaces execute when given. */
export function echoTool(overrides: Partial<AnyTool> = {}): AnyTool {
  return {
    name: "echo",
    label: "Echo",
    description: "Echoes text",
    parameters: echoSchema,
    execute: async (_id: string, args: { text: string; times?: number }): Promise<ToolOutput> => ({
      content: [{ type: "text", text: args.text.repeat(args.times ?? 1) }],
      details: { length: args.text.length },
    }),
    ...overrides,
  };
}

export function contextWith(tools: AnyTool[], extra: Partial<PipelineContext> = {}): PipelineContext {
  return {
    tools: new Map(tools.map((t) => [t.name, t])),
    sandbox: new FakeSandbox(),
    spill: fakeSpill(),
    sessionId: "s1",
    mutationQueue: new FileMutationQueue(),
    ...extra,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
