/**
 * A scripted OpenAI-compatible model server, to try `warden run` with nothing but this clone (no
 * API key, no local model). Plain Node (ESM, stdlib only):
 *
 *   node examples/scripted-model/server.mjs [script.json] [--port N]
 *
 * It listens on 127.0.0.1 (port 8787 unless --port; 0 picks a free one), prints the base URL to use
 * (`OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`) and exits cleanly on SIGINT or SIGTERM. Each
 * POST /v1/chat/completions gets the script's next assistant turn, whatever the request says: it is
 * a recording to play, not a model. A request that starts a conversation (no assistant message in
 * it yet) starts the script again from its first turn, so every `warden run` plays it whole.
 * Once the turns are used up, every request gets one plain text turn (the script's `final`, or
 * FINAL_TEXT) with no tool call, so a run always ends.
 *
 * Script file (JSON; default greet-friendlier.json beside this file, which edits examples/workspace):
 *   { "task": "what the script does (printed at start)",
 *     "turns": [ { "content": "text", "toolCalls": [ { "name": "read", "arguments": { "path": "x" } } ] } ],
 *     "final": "optional text once the turns are used up" }
 * A tool call's `arguments` is an object (sent as JSON) or a string (sent verbatim); `id` is optional.
 *
 * The wire protocol is OpenAI's chat completions streaming (`stream: true`): Server-Sent Events, one
 * `data: {chunk}` line per chat.completion.chunk: a first delta with the role, content deltas,
 * tool_call deltas (the first with index, id, type and function name, then argument pieces by
 * index), a last chunk with finish_reason ("tool_calls" or "stop"), then `data: [DONE]`.
 * test/helpers/openai-test-server.ts builds the tests' server on startScriptedModel.
 */
import { readFileSync, realpathSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

/** The port the command line listens on without --port. */
export const DEFAULT_PORT = 8787;
/** The script the command line plays without a file argument. */
export const DEFAULT_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "greet-friendlier.json");
/** The text answered once a script's turns are used up, unless the script names its own `final`. */
export const FINAL_TEXT = "The scripted model has played its whole script: there is nothing more to do.";
/** Largest request body read, in bytes; a larger one is answered 413. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

let callSerial = 0;

function pieces(text, size) {
  const parts = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts;
}

function jsonError(res, status, message, type = "invalid_request_error") {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type } }));
}

/**
 * Writes `turn` to `res` as one streamed chat completion (the protocol in the module doc) and ends
 * the response. `turn.chunkChars` (default 7) is the size of each content/arguments piece;
 * `turn.finishReason` defaults to "tool_calls" when the turn has calls, else "stop". `model` is
 * echoed in every chunk.
 */
export function writeStreamedTurn(res, turn, model = "scripted") {
  const size = turn.chunkChars ?? 7;
  const calls = turn.toolCalls ?? [];
  const id = `chatcmpl-scripted-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (delta, finish = null) => {
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
  for (const part of pieces(turn.content ?? "", size)) send({ content: part });
  calls.forEach((call, index) => {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
    const callId = call.id ?? `call_scripted_${++callSerial}`;
    send({
      tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }],
    });
    for (const part of pieces(args, size)) send({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  send({}, turn.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"));
  res.write("data: [DONE]\n\n");
  res.end();
}

/**
 * Reads and checks a script file (format in the module doc). Returns `{ task, turns, final }`.
 * Throws an Error naming the file and the field that is wrong.
 */
export function readScript(file) {
  const where = `scripted model: ${file}`;
  let script;
  try {
    script = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${where}: cannot read it as JSON (${error.message})`);
  }
  if (!Array.isArray(script?.turns)) throw new Error(`${where}: needs "turns", an array of assistant turns`);
  script.turns.forEach((turn, i) => {
    for (const [j, call] of (turn.toolCalls ?? []).entries())
      if (typeof call?.name !== "string")
        throw new Error(`${where}: turns[${i}].toolCalls[${j}] needs a "name"`);
  });
  return { task: script.task ?? "", turns: script.turns, final: script.final ?? FINAL_TEXT };
}

const startsConversation = (body) => !(body.messages ?? []).some((m) => m?.role === "assistant");

/**
 * Starts a scripted model on `host` (default 127.0.0.1) and `port` (default 0: a free one).
 * Options: `turns` (played in order, one per chat completions request), `final` (the turn once they
 * are used up: a string, or a turn object; default FINAL_TEXT), `restart` (a request without an
 * assistant message starts the turns again; default false), `model` (echoed when the request names
 * none; default "scripted"), `onRequest(req, body)` (every request, parsed JSON body, any route),
 * and `respond(res, entry, body)`: called before the default answer with the next entry (undefined
 * once used up); returning true means it answered (tests add error and unstreamed answers this way).
 * Resolves `{ baseURL, port, push(...entries), close() }`; rejects on a listen error (EADDRINUSE).
 */
export async function startScriptedModel(options = {}) {
  const turns = [...(options.turns ?? [])];
  const final = typeof options.final === "object" ? options.final : { content: options.final ?? FINAL_TEXT };
  let next = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    let bytes = 0;
    req.on("data", (chunk) => {
      bytes += chunk.length;
      if (bytes <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => {
      if (bytes > MAX_BODY_BYTES) return jsonError(res, 413, `request body over ${MAX_BODY_BYTES} bytes`);
      let body;
      try {
        body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : { messages: [] };
      } catch {
        return jsonError(res, 400, "request body is not JSON");
      }
      if (typeof body !== "object" || body === null)
        return jsonError(res, 400, "request body is not a JSON object");
      options.onRequest?.(req, body);
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions"))
        return jsonError(res, 404, `no route ${req.method} ${req.url}`, "not_found");
      if (options.restart && startsConversation(body)) next = 0;
      const entry = next < turns.length ? turns[next++] : undefined;
      if (options.respond?.(res, entry, body)) return;
      writeStreamedTurn(res, entry ?? final, body.model ?? options.model ?? "scripted");
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve);
  });
  const { address, port } = server.address();
  return {
    baseURL: `http://${address}:${port}/v1`,
    port,
    push: (...entries) => void turns.push(...entries),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function main(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { port: { type: "string" } },
    allowPositionals: true,
  });
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port ${values.port}: not a port number`);
  const file = positionals[0] ?? DEFAULT_SCRIPT;
  const script = readScript(file);
  const model = await startScriptedModel({
    turns: script.turns,
    final: script.final,
    port,
    restart: true,
  }).catch((error) => {
    if (error.code !== "EADDRINUSE") throw error;
    throw new Error(`scripted model: port ${port} is in use; pass --port N (0 picks a free one)`);
  });
  // Handlers first: whoever reads the URL line may signal at once.
  const stop = () => model.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const shown = relative(process.cwd(), file) || file;
  console.log(
    `scripted model: ${shown}, ${script.turns.length} turns${script.task ? ` (task: ${script.task})` : ""}`,
  );
  console.log(`OPENAI_BASE_URL=${model.baseURL}`);
}

const invoked = process.argv[1] && pathToFileURL(realpathSync(process.argv[1])).href;
if (invoked === import.meta.url) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
