/**
 * An MCP server (the SDK's low-level `Server`) whose tools are one warden session's enabled tools:
 * `tools/list` gives the names, descriptions and JSON schemas of `session.providerTools()` unchanged;
 * `tools/call` runs one call through `session.runToolCalls` (validation, policy, approval, truncation),
 * so a refused or failing call is a result with `isError: true` and the pipeline's text; arguments
 * nested deeper than MAX_ARGUMENT_DEPTH, a tool name over MAX_TOOL_NAME_CHARS and a progress token
 * over MAX_PROGRESS_TOKEN_CHARS (REST's bounds, src/pipeline) are refused so before the pipeline,
 * and run nothing. Streaming
 * updates become `notifications/progress` when the request carries a progress token; while the
 * stream carrying them takes no more (McpToolSession.progressCongested) they are dropped.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  argumentDepthMessage,
  callFieldRefusal,
  MAX_ARGUMENT_DEPTH,
  nestsDeeperThan,
  type RunToolCallsOptions,
  type ToolExecutionEvent,
} from "../pipeline/index.js";
import type { Session } from "../session/index.js";
import type { ToolCall, ToolOutput, ToolResultMessage } from "../tools/index.js";
import { WARDEN_VERSION } from "../version.js";

/** The key under which a result's `details` (Pi's structured details) travel in `_meta`. */
export const DETAILS_META_KEY = "io.warden/details";

/** Longest progress message, in characters: the tail of the output so far. */
export const PROGRESS_MESSAGE_MAX_CHARS = 400;

/** A fresh MCP server named `warden` announcing the tools capability; attach a session with `serveSessionTools`. */
export function createMcpServer(): Server {
  return new Server({ name: "warden", version: WARDEN_VERSION }, { capabilities: { tools: {} } });
}

/** The MCP tool list of `session`: one entry per provider tool, schemas as JSON. */
export function mcpToolsOf(session: Pick<Session, "providerTools">): Tool[] {
  return session.providerTools().map(({ function: f }) => ({
    name: f.name,
    description: f.description,
    inputSchema: f.parameters as Tool["inputSchema"],
  }));
}

/** A ToolResultMessage as an MCP CallToolResult (text and image content map one to one). */
export function toCallToolResult(result: ToolResultMessage): CallToolResult {
  return {
    content: result.content.map((c) =>
      c.type === "text"
        ? { type: "text" as const, text: c.text }
        : { type: "image" as const, data: c.data, mimeType: c.mimeType },
    ),
    isError: result.isError,
    ...(result.details === undefined ? {} : { _meta: { [DETAILS_META_KEY]: result.details } }),
  };
}

/** The progress message for a partial output: the tail of its text, at most PROGRESS_MESSAGE_MAX_CHARS. */
export function progressMessage(partial: ToolOutput): string {
  const text = partial.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
  return text.length > PROGRESS_MESSAGE_MAX_CHARS ? text.slice(-PROGRESS_MESSAGE_MAX_CHARS) : text;
}

/** The JSON-RPC request a tools/call came in: its id and the signal fired when it is cancelled. */
export interface McpCallRequest {
  id: RequestId;
  /** Fires when the client cancels the request or the transport closes: no answer is sent then. */
  signal: AbortSignal;
}

/**
 * What serveSessionTools runs calls with: a Session, or a runner that also reads the tools/call's
 * JSON-RPC request (`warden serve` keeps the call's slot until the answer to that id is delivered).
 */
export interface McpToolSession extends Pick<Session, "providerTools"> {
  runToolCalls(
    calls: ToolCall[],
    options: RunToolCallsOptions,
    request: McpCallRequest,
  ): Promise<ToolResultMessage[]>;
  /**
   * True while the stream that carries `request`'s messages takes no more (its socket is not
   * draining): a progress notification is then dropped, not queued, as REST's SSE writer coalesces
   * its updates, so a client that does not read holds no more than a socket's buffer of them. The
   * next update after the stream drains is sent with the newest output. Absent: never.
   */
  progressCongested?(request: McpCallRequest): boolean;
}

/**
 * Registers the tools/list and tools/call handlers of `session` on `server` (a Session, or anything
 * that runs calls like one: `warden serve` passes its manager's quota-checked runner). Each call also
 * stops when `signal` fires (the server is shutting down) or the client cancels the request.
 */
export function serveSessionTools(server: Server, session: McpToolSession, signal: AbortSignal): void {
  const tools = mcpToolsOf(session);
  let callCount = 0;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    callCount += 1;
    const id = `mcp-${callCount}`;
    const progressToken = request.params._meta?.progressToken;
    let progress = 0;
    const call: McpCallRequest = { id: extra.requestId, signal: extra.signal };
    const onEvent = (event: ToolExecutionEvent): void => {
      if (event.type !== "tool_execution_update" || progressToken === undefined) return;
      if (session.progressCongested?.(call)) return;
      progress += 1;
      extra
        .sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress, message: progressMessage(event.partial) },
        })
        .catch(() => undefined);
    };
    // REST's bounds on a call's name (src/pipeline/call-fields.ts) and on its progress token, which
    // every progress notification repeats: refused, nothing run.
    const fieldRefusal = callFieldRefusal(id, request.params.name, progressToken);
    if (fieldRefusal) return { content: [{ type: "text", text: fieldRefusal }], isError: true };
    const args = request.params.arguments ?? {};
    // The bound REST applies (src/server/http/call-arguments.ts): refused, nothing run.
    if (nestsDeeperThan(args, MAX_ARGUMENT_DEPTH))
      return {
        content: [{ type: "text", text: argumentDepthMessage(id, "the call was not run") }],
        isError: true,
      };
    const [result] = await session.runToolCalls(
      [{ id, name: request.params.name, arguments: args }],
      { signal: AbortSignal.any([signal, extra.signal]), onEvent },
      call,
    );
    if (!result) throw new Error("The pipeline returned no result.");
    return toCallToolResult(result);
  });
}
