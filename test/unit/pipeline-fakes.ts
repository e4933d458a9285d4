/** Fakes for pipeline unit tests: a sandbox that only resolves paths, a spill store, simple tools. */
import { posix } from "node:path";
import { Type } from "typebox";
import { FileMutationQueue, type PipelineContext } from "../../src/pipeline/index.js";
import type { Sandbox } from "../../src/sandbox/types.js";
import type { AnyTool, SpillStore, ToolOutput } from "../../src/tools/types.js";

/** A sandbox whose realpath follows `links` (container path -> target); every other method rejects. */
export function fakeSandbox(links: Record<string, string> = {}): Sandbox {
  const unsupported = (): Promise<never> => Promise.reject(new Error("not in the fake sandbox"));
  return {
    info: {
      containerId: "fake",
      sessionId: "s1",
      tenant: "test-unit",
      image: "fake",
      runtime: "runc",
      workspaceMode: "copy",
      roots: ["/workspace"],
      createdAt: new Date(0),
      expiresAt: new Date(0),
    },
    exec: unsupported,
    readFile: unsupported,
    writeFile: unsupported,
    stat: unsupported,
    realpath: async (path) => links[posix.resolve("/workspace", path)] ?? posix.resolve("/workspace", path),
    listDir: unsupported,
    exportWorkspace: unsupported,
    changedPaths: unsupported,
    destroy: async () => undefined,
    [Symbol.asyncDispose]: async () => undefined,
  };
}

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
    sandbox: fakeSandbox(),
    spill: fakeSpill(),
    sessionId: "s1",
    mutationQueue: new FileMutationQueue(),
    ...extra,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
