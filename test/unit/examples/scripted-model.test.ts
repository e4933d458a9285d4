/**
 * examples/scripted-model/server.mjs as a user runs it (`node … [script] [--port N]`), spoken to by
 * warden run's own model client (the real openai SDK): the shipped script's turns in order, a new
 * conversation starting it again, the final text turn once it is used up, clean exits on SIGTERM
 * and SIGINT, and the errors for a taken port and a bad script.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { FINAL_TEXT } from "../../../examples/scripted-model/server.mjs";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { REPO_ROOT } from "../../helpers/doc-snippets.js";

const SERVER = join(REPO_ROOT, "examples/scripted-model/server.mjs");
/** The CLI with `args` (its base URL comes from startCli). */
const launch = (...args: string[]) => execa("node", [SERVER, ...args], { cwd: REPO_ROOT, reject: false });
const started: ReturnType<typeof launch>[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) {
    child.kill("SIGKILL");
    await child.catch(() => undefined);
  }
});

/** Starts the CLI and resolves its base URL from the line it prints. */
async function startCli(...args: string[]): Promise<{ child: ReturnType<typeof launch>; baseURL: string }> {
  const child = launch(...args);
  started.push(child);
  let out = "";
  const baseURL = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^OPENAI_BASE_URL=(\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    });
    void child.then(() => reject(new Error(`server exited before printing its URL: ${out}`)));
  });
  return { child, baseURL };
}

const modelAt = (baseURL: string) =>
  new OpenAIChatModel({ model: "any", baseURL, apiKeyEnv: "OPENAI_API_KEY" });
const user: ChatCompletionMessageParam = { role: "user", content: "make greet friendlier" };
const went: ChatCompletionMessageParam = { role: "assistant", content: "…" };

describe("examples/scripted-model/server.mjs", () => {
  it("plays the shipped script in order, restarts it for a new conversation, then answers the final text", async () => {
    const { baseURL } = await startCli("--port", "0");
    const model = modelAt(baseURL);
    const first = {
      content: "Let me read the greeting first.",
      toolCalls: [
        {
          id: expect.stringMatching(/^call_scripted_\d+$/),
          name: "read",
          arguments: '{"path":"src/greet.py"}',
        },
      ],
      finishReason: "tool_calls",
    };
    expect(await model.complete([user], [])).toEqual(first);
    const edit = await model.complete([user, went], []);
    expect(JSON.parse(edit.toolCalls[0]!.arguments)).toEqual({
      path: "src/greet.py",
      edits: [{ oldText: 'return f"Hello, {name}!"', newText: 'return f"Hello, {name}! Nice to see you."' }],
    });
    expect(await model.complete([user], [])).toEqual(first);
    const names: string[] = [];
    for (let i = 0; i < 3; i++)
      names.push(...(await model.complete([user, went], [])).toolCalls.map((c) => c.name));
    expect(names).toEqual(["edit", "bash"]);
    const final = { content: FINAL_TEXT, toolCalls: [], finishReason: "stop" };
    expect(await model.complete([user, went], [])).toEqual(final);
    expect(await model.complete([user, went], [])).toEqual(final);
  });

  it("exits with status 0 on SIGTERM and on SIGINT", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const { child } = await startCli("--port", "0");
      child.kill(signal);
      const result = await child;
      expect([result.exitCode, result.signal]).toEqual([0, undefined]);
    }
  });

  it("names the taken port and the fix when --port is in use", async () => {
    const { baseURL } = await startCli("--port", "0");
    const port = new URL(baseURL).port;
    const second = await execa("node", [SERVER, "--port", port], { reject: false });
    expect([second.exitCode, second.stderr]).toEqual([
      1,
      `scripted model: port ${port} is in use; pass --port N (0 picks a free one)`,
    ]);
  });

  it("names the script file and the field when a tool call has no name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-scripted-"));
    try {
      const file = join(dir, "bad.json");
      writeFileSync(file, JSON.stringify({ turns: [{ toolCalls: [{ arguments: {} }] }] }));
      const run = await execa("node", [SERVER, file, "--port", "0"], { reject: false });
      expect([run.exitCode, run.stderr]).toEqual([
        1,
        `scripted model: ${file}: turns[0].toolCalls[0] needs a "name"`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
