/** executeRun's guarantees without an engine: the session is always closed and the run always recorded. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OpenAIChatModel } from "../../../src/agent/model.js";
import { executeRun } from "../../../src/agent/run-session.js";
import { readRunTranscript, TranscriptWriter } from "../../../src/agent/transcript.js";
import { EngineUnreachableError } from "../../../src/errors.js";
import type { Session } from "../../../src/session/types.js";
import { createFakeSession } from "../../helpers/agent-fake-session.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

let server: OpenAITestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "warden-exec-run-"));
  writeFileSync(join(dir, "a.txt"), "x");
  return { dir, transcript: new TranscriptWriter(join(dir, "r.jsonl")) };
}

const model = (baseURL: string) => new OpenAIChatModel({ model: "m", baseURL, apiKeyEnv: "OPENAI_API_KEY" });

describe("executeRun", () => {
  it("records run_start and run_end when the session cannot be created, and rejects", async () => {
    const { transcript } = setup();
    const err = new EngineUnreachableError("ECONNREFUSED while pinging");
    await expect(
      executeRun({
        task: "t",
        model: model("http://127.0.0.1:9/v1"),
        sessionOptions: { sessionId: "s-1" },
        createSession: async () => {
          throw err;
        },
        transcript,
      }),
    ).rejects.toBe(err);
    const records = readRunTranscript(transcript.path).records;
    expect(records.map((r) => r.warden)).toEqual(["run_start", "run_end"]);
    expect(records[1]).toMatchObject({ stopReason: "error", turns: 0, error: err.message });
  });

  it("closes the session when reading the review fails", async () => {
    server = await startOpenAITestServer([{ content: "done" }]);
    const { dir, transcript } = setup();
    const close = vi.fn(async () => {});
    const failing = new Error("container gone");
    const session = {
      ...createFakeSession(),
      enabledTools: [],
      close,
      sandbox: { changedPaths: async () => Promise.reject(failing) },
    } as unknown as Session;
    await expect(
      executeRun({
        task: "t",
        model: model(server.baseURL),
        sessionOptions: { sessionId: "s-2", sandbox: { workspace: { hostPath: dir, mode: "copy" } } },
        createSession: async () => session,
        transcript,
      }),
    ).rejects.toBe(failing);
    expect(close).toHaveBeenCalledTimes(1);
    expect(readRunTranscript(transcript.path).records.at(-1)).toMatchObject({
      warden: "run_end",
      stopReason: "error",
    });
  });
});
