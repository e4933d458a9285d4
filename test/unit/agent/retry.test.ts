/** Provider errors through the real openai client: 429 + Retry-After, 401, 5xx with bounded retries. */
import { afterEach, describe, expect, it } from "vitest";
import {
  ProviderAuthError,
  ProviderError,
  ProviderRateLimitError,
  ProviderStreamError,
} from "../../../src/agent/errors.js";
import { runAgent } from "../../../src/agent/loop.js";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { retryAfterMs, withRetries } from "../../../src/agent/retry.js";
import type { AgentEvent } from "../../../src/agent/types.js";
import { createFakeSession } from "../../helpers/agent-fake-session.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const model = (s: OpenAITestServer, keyEnv = "OPENAI_API_KEY") =>
  new OpenAIChatModel({
    model: "m",
    baseURL: s.baseURL,
    apiKey: "sk-bad",
    apiKeyEnv: keyEnv,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 2000 },
  });

describe("provider errors", () => {
  it("waits per Retry-After on 429, then succeeds", async () => {
    server = await startOpenAITestServer([
      { status: 429, headers: { "retry-after": "1" }, error: { message: "slow down" } },
      { content: "hello" },
    ]);
    const events: AgentEvent[] = [];
    const started = Date.now();
    const result = await runAgent({
      session: createFakeSession(),
      model: model(server),
      task: "t",
      onEvent: (e) => events.push(e),
    });
    expect(result).toEqual({ stopReason: "final", turns: 1, finalText: "hello" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(server.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "model_retry")).toEqual([
      { type: "model_retry", attempt: 1, delayMs: 1000, status: 429, reason: "slow down" },
    ]);
  });

  it("fails a 401 at once with a message naming the key variable", async () => {
    server = await startOpenAITestServer([{ status: 401, error: { message: "Incorrect API key provided" } }]);
    const result = await runAgent({
      session: createFakeSession(),
      model: model(server, "MY_KEY"),
      task: "t",
    });
    expect(result.stopReason).toBe("error");
    expect(result.error).toBeInstanceOf(ProviderAuthError);
    expect((result.error as ProviderAuthError).code).toBe("UNAUTHORIZED");
    expect((result.error as Error).message).toBe(
      "The model provider rejected the API key (HTTP 401: Incorrect API key provided). Check the key in the " +
        "environment variable MY_KEY, or name another variable with --api-key-env NAME.",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("retries 5xx a bounded number of times, then fails clearly", async () => {
    const boom = { status: 503, error: { message: "overloaded" } } as const;
    server = await startOpenAITestServer([boom, boom, boom, { content: "never" }]);
    const result = await runAgent({ session: createFakeSession(), model: model(server), task: "t" });
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).code).toBe("PROVIDER_ERROR");
    expect((result.error as Error).message).toBe(
      "The model provider answered HTTP 503 (overloaded) after 3 attempts. Check --base-url and --model, and that the server is up.",
    );
    expect(server.requests).toHaveLength(3);
  });

  it("a 400 names streaming and tools, a 404 the base URL's path; neither is retried", async () => {
    server = await startOpenAITestServer([
      { status: 400, error: { message: "stream is not supported" } },
      { status: 404, error: { message: "Not Found" } },
    ]);
    const first = await runAgent({ session: createFakeSession(), model: model(server), task: "t" });
    expect((first.error as Error).message).toBe(
      "The model provider answered HTTP 400 (stream is not supported) after 1 attempt. Check --model, and that the server takes streamed chat completions with tools: warden run sends stream: true and a tools list on every request.",
    );
    const second = await runAgent({ session: createFakeSession(), model: model(server), task: "t" });
    expect((second.error as Error).message).toBe(
      "The model provider answered HTTP 404 (Not Found) after 1 attempt. Check --base-url (OpenAI-compatible servers serve the API under a path, most often /v1) and --model.",
    );
    expect(server.requests).toHaveLength(2);
  });

  it("a server that ignores stream: true and answers one JSON body is an error, not an empty final answer", async () => {
    server = await startOpenAITestServer([{ unstreamed: "hello" }]);
    const result = await runAgent({ session: createFakeSession(), model: model(server), task: "t" });
    expect(result.stopReason).toBe("error");
    expect(result.error).toBeInstanceOf(ProviderStreamError);
    expect((result.error as ProviderStreamError).code).toBe("PROVIDER_ERROR");
    expect((result.error as Error).message).toBe(
      "The model provider answered without streaming (content-type application/json, no server-sent events), but warden run sends stream: true and reads the answer as it streams. Use a server or endpoint that streams OpenAI chat completions (vLLM, Ollama and llama.cpp's server do), or turn streaming on in its settings.",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("gives up on a 429 that persists with ProviderRateLimitError", async () => {
    const slow = { status: 429, headers: { "retry-after-ms": "10" }, error: { message: "quota" } } as const;
    server = await startOpenAITestServer([slow, slow, slow]);
    const result = await runAgent({ session: createFakeSession(), model: model(server), task: "t" });
    expect(result.error).toBeInstanceOf(ProviderRateLimitError);
    expect((result.error as ProviderRateLimitError).code).toBe("RATE_LIMITED");
  });

  it("retries network errors with exponential backoff", async () => {
    const waits: number[] = [];
    const err = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls++;
          throw err;
        },
        {
          keyEnv: "K",
          policy: { maxAttempts: 4, baseDelayMs: 100 },
          sleep: async (ms) => void waits.push(ms),
        },
      ),
    ).rejects.toThrow("The model provider could not be reached (connect ECONNREFUSED) after 4 attempts.");
    expect(calls).toBe(4);
    expect(waits).toEqual([100, 200, 400]);
  });

  it("does not retry programming errors", async () => {
    let calls = 0;
    await expect(
      withRetries(
        async () => {
          calls++;
          throw new TypeError("x is undefined");
        },
        { keyEnv: "K" },
      ),
    ).rejects.toBeInstanceOf(ProviderError);
    expect(calls).toBe(1);
  });

  it("parses Retry-After as seconds, an HTTP date, and retry-after-ms", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after-ms": "150" }))).toBe(150);
    expect(
      retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), Date.UTC(2026, 0, 1)),
    ).toBe(10_000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});
