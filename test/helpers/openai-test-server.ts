/**
 * The tests' OpenAI-compatible chat completions server: examples/scripted-model/server.mjs (the one
 * implementation of the streaming wire protocol, shipped for users to try `warden run`), plus what
 * only tests need: every request recorded, HTTP error answers, `unstreamed` answers, and a 400 once
 * the script is used up (instead of the example's final text turn), so a test that asks more than it
 * scripted fails. Responses come from a script, one entry per request, in order.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { type ScriptedTurn, startScriptedModel } from "../../examples/scripted-model/server.mjs";

/** One scripted tool call. `arguments` is sent verbatim (it may be invalid JSON on purpose). */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One scripted answer: a streamed assistant message (the example's turn), an HTTP error, or
 * `unstreamed`: a whole chat.completion JSON body (200, application/json) as a server that ignores
 * `stream: true` sends.
 */
export type ScriptedResponse =
  | (Omit<ScriptedTurn, "toolCalls"> & { toolCalls?: ScriptedToolCall[] })
  | { status: number; headers?: Record<string, string>; error: { message: string; type?: string } }
  | { unstreamed: string };

/** A request as the server received it. `body` is the parsed JSON. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    stream?: boolean;
    messages: Array<Record<string, unknown>>;
    tools?: Array<{ type: string; function: { name: string } }>;
  };
}

/** A running server. `baseURL` ends in /v1, as the openai client expects. */
export interface OpenAITestServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Appends answers to the script. */
  push(...responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** The test-only answers; false for a streamed turn, which the example writes. */
function respond(res: ServerResponse, answer: ScriptedResponse | undefined): boolean {
  if (answer === undefined) {
    sendJson(res, 400, { error: { message: "test server script exhausted", type: "invalid_request_error" } });
    return true;
  }
  if ("status" in answer) {
    sendJson(res, answer.status, { error: answer.error }, answer.headers);
    return true;
  }
  if ("unstreamed" in answer) {
    const message = { role: "assistant", content: answer.unstreamed };
    sendJson(res, 200, {
      object: "chat.completion",
      choices: [{ index: 0, message, finish_reason: "stop" }],
    });
    return true;
  }
  return false;
}

/** Starts a server on 127.0.0.1 (random port) answering `script` in order. */
export async function startOpenAITestServer(script: ScriptedResponse[] = []): Promise<OpenAITestServer> {
  const requests: RecordedRequest[] = [];
  const server = await startScriptedModel<ScriptedResponse>({
    turns: script,
    model: "test-model",
    onRequest: (req, body) =>
      requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: body as unknown as RecordedRequest["body"],
      }),
    respond,
  });
  return { baseURL: server.baseURL, requests, push: server.push, close: server.close };
}
