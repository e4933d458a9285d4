/**
 * Bounds on the fields of a tool call a client names, the same for every way a call comes in
 * (`warden serve`'s REST batches, src/server/http/schemas.ts; MCP `tools/call`, src/mcp/tool-server.ts,
 * over stdio and over `/mcp`). Each field is written again after the request is read: the id and
 * name into the call's audit line, its in-flight journal entry, approvals and events; an MCP
 * progress token into every `notifications/progress` of the call (up to 10 a second, for as long
 * as it runs). Unbounded, one call's id made a megabyte audit line, and a 500 KB progress token
 * made four running MCP calls grow a server by about 20 MB a second while their streams were not
 * read (red team, attack-38a).
 */

/** Longest tool-call id, in characters (providers' ids are under 64). */
export const MAX_TOOL_CALL_ID_CHARS = 256;

/** Longest tool name, in characters (OpenAI's function names: 64). */
export const MAX_TOOL_NAME_CHARS = 128;

/**
 * Longest MCP progress token (`params._meta.progressToken`), in characters: a string's length, a
 * number's decimal form. Clients send a counter or a short id; it is an id like the call's.
 */
export const MAX_PROGRESS_TOKEN_CHARS = MAX_TOOL_CALL_ID_CHARS;

/**
 * Why an MCP `tools/call` cannot run because a field is over its bound, or undefined when every
 * field is within it. `id` is warden's id of the call (`mcp-N`), `name` the tool name the client
 * sent, `progressToken` its progress token (absent: undefined). The message names the field, its
 * length, the bound, that nothing ran, and the fix.
 */
export function callFieldRefusal(id: string, name: string, progressToken: unknown): string | undefined {
  if (name.length > MAX_TOOL_NAME_CHARS)
    return (
      `Tool call '${id}' has a name of ${name.length} characters, over ${MAX_TOOL_NAME_CHARS}; ` +
      "the call was not run: call a tool by a name tools/list gives."
    );
  const token = progressToken === undefined ? undefined : String(progressToken);
  if (token !== undefined && token.length > MAX_PROGRESS_TOKEN_CHARS)
    return (
      `Tool call '${id}' has a progressToken of ${token.length} characters, over ${MAX_PROGRESS_TOKEN_CHARS}; ` +
      "the call was not run: send a shorter progressToken (a counter or a short id)."
    );
  return undefined;
}
