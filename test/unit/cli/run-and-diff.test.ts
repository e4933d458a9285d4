/** `warden run` without a model, model configuration, and `warden diff`. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ModelNotConfiguredError, NO_MODEL_MESSAGE } from "../../../src/agent/errors.js";
import { resolveModelConfig } from "../../../src/agent/model.js";
import { savedPatchPath, statOfPatch } from "../../../src/cli/commands/diff.js";
import { type RunFlags, runRun } from "../../../src/cli/commands/run.js";
import type { Session, SessionOptions } from "../../../src/session/types.js";
import { createFakeSession } from "../../helpers/agent-fake-session.js";
import { DEFAULT_POLICY_NOTICE } from "../../helpers/cli-policy.js";
import { startOpenAITestServer } from "../../helpers/openai-test-server.js";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

describe("warden run configuration", () => {
  it("--api-key-env naming an unset variable names it and the fix, exits 2, opens no session", async () => {
    vi.stubEnv("MY_KEY", "");
    vi.stubEnv("OPENAI_API_KEY", "sk-other");
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((c) => err.push(String(c)) > 0);
    const createSession = vi.fn();
    await runRun({ task: "x", maxTurns: 5, apiKeyEnv: "MY_KEY" } as RunFlags, { createSession });
    expect(process.exitCode).toBe(2);
    expect(err.join("")).toBe(
      "--api-key-env MY_KEY: the environment variable MY_KEY is not set (or is empty). Set it (export MY_KEY=…) or drop --api-key-env.\n",
    );
    expect(createSession).not.toHaveBeenCalled();
  });

  it("with no key and no base URL, says how to configure a model, points to replay, exits 2, opens no session", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    vi.stubEnv("OPENAI_BASE_URL", "");
    const err: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((c) => err.push(String(c)) > 0);
    const createSession = vi.fn();
    await runRun({ task: "x", maxTurns: 5 } as RunFlags, { createSession });
    expect(process.exitCode).toBe(2);
    expect(err.join("")).toBe(`${NO_MODEL_MESSAGE}\n`);
    expect(NO_MODEL_MESSAGE).toBe(
      [
        "warden run needs a model, and none is configured.",
        "Configure one of:",
        "  - OpenAI:  export OPENAI_API_KEY=sk-...   (optionally --model gpt-4.1-mini)",
        "  - a key in another variable:  --api-key-env NAME",
        "  - any OpenAI-compatible server (vLLM, Ollama, llama.cpp):",
        "      --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder",
        "Without a model, 'warden replay <transcript.jsonl>' runs recorded tool calls in the sandbox.",
      ].join("\n"),
    );
    expect(createSession).not.toHaveBeenCalled();
  });

  it("takes the key from the named variable, and accepts a base URL without a key", () => {
    expect(resolveModelConfig({ apiKeyEnv: "MY_KEY", model: "m" }, { MY_KEY: "sk-1" })).toEqual({
      model: "m",
      apiKey: "sk-1",
      apiKeyEnv: "MY_KEY",
      baseURL: undefined,
    });
    expect(resolveModelConfig({ baseUrl: "http://127.0.0.1:8080/v1" }, {})).toEqual({
      model: "gpt-4.1-mini",
      apiKey: undefined,
      apiKeyEnv: "OPENAI_API_KEY",
      baseURL: "http://127.0.0.1:8080/v1",
    });
    expect(() => resolveModelConfig({ apiKeyEnv: "MY_KEY" }, { OPENAI_API_KEY: "sk-other" })).toThrow(
      ModelNotConfiguredError,
    );
  });
});

/** A fake session for runRun: no tools, no changes; `close` is its close. */
function runSession(close: () => Promise<void> = async () => {}): Session {
  const fake = createFakeSession();
  return {
    ...fake,
    enabledTools: [],
    close,
    sandbox: { changedPaths: async () => [] },
  } as unknown as Session;
}

/**
 * runRun with `flags` (task "x", 5 turns, a transcript beside `flags.workspace`) against a model
 * server that answers 401; resolves the closed server (its requests).
 */
async function runAgainst401(
  flags: Partial<RunFlags> & { workspace: string },
  createSession: NonNullable<Parameters<typeof runRun>[1]>["createSession"],
) {
  const server = await startOpenAITestServer([{ status: 401, error: { message: "bad key" } }]);
  try {
    await runRun(
      {
        task: "x",
        maxTurns: 5,
        baseUrl: server.baseURL,
        transcript: join(flags.workspace, "..", `${Date.now()}-${Math.random()}.jsonl`),
        ...flags,
      } as RunFlags,
      { createSession },
    );
  } finally {
    await server.close();
  }
  return server;
}

describe("warden run provider failure", () => {
  it("a 401 ends the run with a message naming the key variable, exit 2, and the session closed", async () => {
    vi.stubEnv("TEAM_KEY", "sk-wrong");
    const err: string[] = [];
    const out: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((c) => err.push(String(c)) > 0);
    vi.spyOn(process.stdout, "write").mockImplementation((c) => out.push(String(c)) > 0);
    const close = vi.fn(async () => {});
    const dir = mkdtempSync(join(tmpdir(), "warden-run-401-"));
    const server = await runAgainst401({ apiKeyEnv: "TEAM_KEY", workspace: dir }, async () =>
      runSession(close),
    );
    expect(process.exitCode).toBe(2);
    expect(close).toHaveBeenCalledTimes(1);
    expect(err.join("")).toBe(
      DEFAULT_POLICY_NOTICE +
        "warden: The model provider rejected the API key (HTTP 401: bad key). Check the key in the environment " +
        "variable TEAM_KEY, or name another variable with --api-key-env NAME.\n",
    );
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-wrong");
  });
});

describe("warden run and the policy's network section", () => {
  it("gives the session the network the policy's network: section allows, with the policy hook", async () => {
    vi.stubEnv("TEAM_KEY", "sk-x");
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const dir = mkdtempSync(join(tmpdir(), "warden-run-net-"));
    const policy = join(dir, "..", `${Date.now()}-net.yaml`);
    writeFileSync(
      policy,
      "default: allow\nrules: []\nnetwork:\n  allow: [pypi.org:443]\n  deny: [evil.test]\n",
    );
    const seen: SessionOptions[] = [];
    await runAgainst401(
      { apiKeyEnv: "TEAM_KEY", workspace: dir, policy: [policy], nonInteractive: true },
      async (options) => {
        seen.push(options);
        return runSession();
      },
    );
    const network = seen[0]?.sandbox?.network;
    expect(
      network?.mode === "allowlist" ? network.rules.map((r) => [r.decision, r.host, r.ports]) : network,
    ).toEqual([
      ["allow", "pypi.org", [443]],
      ["deny", "evil.test", [80, 443]],
    ]);
    expect(seen[0]?.beforeToolCall).toHaveLength(1);
  });
});

describe("warden diff", () => {
  const patch = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,1 +1,2 @@\n-x\n+y\n+z\n";

  it("finds the patch saved next to a transcript, or takes a patch file", () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-diff-"));
    writeFileSync(join(dir, "run.jsonl"), "");
    writeFileSync(join(dir, "run.jsonl.patch"), patch);
    expect(savedPatchPath(join(dir, "run.jsonl"))).toBe(join(dir, "run.jsonl.patch"));
    expect(savedPatchPath(join(dir, "run.jsonl.patch"))).toBe(join(dir, "run.jsonl.patch"));
    writeFileSync(join(dir, "clean.jsonl"), "");
    expect(() => savedPatchPath(join(dir, "clean.jsonl"))).toThrow(
      `No saved patch for ${join(dir, "clean.jsonl")} (looked for ${join(dir, "clean.jsonl.patch")})`,
    );
    expect(() => savedPatchPath(join(dir, "none.jsonl"))).toThrow(
      `No such transcript or patch: ${join(dir, "none.jsonl")}.`,
    );
  });

  it("prints a diffstat of a saved patch", () => {
    expect(statOfPatch(patch)).toBe(" a |    3 ++-\n 1 file changed, 2 insertions(+), 1 deletion(-)\n");
  });
});
