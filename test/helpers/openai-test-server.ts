/**
 * An OpenAI-compatible chat completions server for tests, speaking the real wire protocol so the real
 * openai client is exercised: POST /v1/chat/completions with `stream: true` answers Server-Sent Events,
 * one `data: {chunk}` line per chunk (content deltas, tool_call deltas split across chunks with their
 * index, id, type and function name/arguments), a final chunk with finish_reason, then `data: [DONE]`.
 * Responses come from a script, one entry per request; every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted tool call. `arguments` is sent verbatim (it may be invalid JSON on purpose). */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One scripted answer: a streamed assistant message, an HTTP error, or `unstreamed`: a whole
 * chat.completion JSON body (200, application/json) as a server that ignores `stream: true` sends.
 */
export type ScriptedResponse =
  | {
      content?: string;
      toolCalls?: ScriptedToolCall[];
      /** Default "tool_calls" when there are calls, else "stop". */
      finishReason?: "stop" | "tool_calls" | "length";
      /** Characters per content/arguments chunk. Default 7. */
      chunkChars?: number;
    }
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

function split(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

function streamTurn(
  res: ServerResponse,
  answer: Exclude<ScriptedResponse, { status: number } | { unstreamed: string }>,
  model: string,
) {
  const size = answer.chunkChars ?? 7;
  const id = `chatcmpl-test-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finish: string | null = null) => {
    const chunk = {
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  send({ role: "assistant", content: "" });
  for (const part of split(answer.content ?? "", size)) send({ content: part });
  (answer.toolCalls ?? []).forEach((call, index) => {
    send({
      tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
    });
    for (const part of split(call.arguments, size))
      send({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  const finish = answer.finishReason ?? ((answer.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
  send({}, finish);
  res.write("data: [DONE]\n\n");
  res.end();
}

/** Starts a server on 127.0.0.1 (random port) answering `script` in order. */
export async function startOpenAITestServer(script: ScriptedResponse[] = []): Promise<OpenAITestServer> {
  const queue = [...script];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = (raw ? JSON.parse(raw) : { messages: [] }) as RecordedRequest["body"];
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const answer = queue.shift();
      if (!answer) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: { message: "test server script exhausted", type: "invalid_request_error" },
          }),
        );
        return;
      }
      if ("status" in answer) {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(JSON.stringify({ error: answer.error }));
        return;
      }
      if ("unstreamed" in answer) {
        res.writeHead(200, { "content-type": "application/json" });
        const message = { role: "assistant", content: answer.unstreamed };
        res.end(
          JSON.stringify({
            object: "chat.completion",
            choices: [{ index: 0, message, finish_reason: "stop" }],
          }),
        );
        return;
      }
      streamTurn(res, answer, body.model ?? "test-model");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...responses) => queue.push(...responses),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
