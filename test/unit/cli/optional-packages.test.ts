/**
 * The optional peer dependencies (OPTIONAL_FEATURES, src/util/optional-package.ts) load only where a
 * feature runs: importing the library and registering every CLI command loads none of them (each is
 * mocked to throw here); `warden serve`, `warden mcp` and `warden run` load theirs when they run.
 * test/package proves the same with the packages really absent.
 */
import { Command } from "commander";
import { describe, expect, it, vi } from "vitest";

const { loaded } = vi.hoisted(() => ({
  loaded: (name: string) => () => {
    throw new Error(`${name} was loaded`);
  },
}));
vi.mock("fastify", loaded("fastify"));
vi.mock("@fastify/swagger", loaded("@fastify/swagger"));
vi.mock("@fastify/type-provider-typebox", loaded("@fastify/type-provider-typebox"));
vi.mock("@fastify/websocket", loaded("@fastify/websocket"));
vi.mock("prom-client", loaded("prom-client"));
vi.mock("openai", loaded("openai"));
vi.mock("@modelcontextprotocol/sdk/server/index.js", loaded("@modelcontextprotocol/sdk"));
vi.mock("@modelcontextprotocol/sdk/server/stdio.js", loaded("@modelcontextprotocol/sdk"));
vi.mock("@modelcontextprotocol/sdk/server/streamableHttp.js", loaded("@modelcontextprotocol/sdk"));
vi.mock("@modelcontextprotocol/sdk/types.js", loaded("@modelcontextprotocol/sdk"));
vi.mock("@kubernetes/client-node", loaded("@kubernetes/client-node"));

/** The message of the error `promise` rejects with, or of its cause (vitest wraps a mock factory's throw). */
async function loadFailure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  return String((err?.cause as Error | undefined)?.message ?? err?.message);
}

describe("optional packages load only where a feature runs", () => {
  it("importing the library and registering every CLI command loads none of them", async () => {
    const lib = await import("../../../src/index.js");
    expect(typeof lib.createSession).toBe("function");
    const { commands } = await import("../../../src/cli/commands/index.js");
    const program = new Command("warden");
    for (const register of commands) register(program);
    expect(program.commands.map((c) => c.name())).toContain("serve");
  }, 60_000);

  it("warden serve, warden mcp and warden run load theirs when they run", async () => {
    const { commands } = await import("../../../src/cli/commands/index.js");
    const program = new Command("warden").exitOverride();
    for (const register of commands) register(program);
    const run = (...args: string[]) => program.parseAsync(["node", "warden", ...args]);
    expect(await loadFailure(run("serve", "--hash-key", "k"))).toMatch(
      /^(fastify|@fastify\/|prom-client|@modelcontextprotocol)/,
    );
    expect(await loadFailure(run("mcp"))).toBe("@modelcontextprotocol/sdk was loaded");
    const { loadOpenAI } = await import("../../../src/agent/index.js");
    expect(await loadFailure(loadOpenAI())).toBe("openai was loaded");
  }, 60_000);
});
