/**
 * The client's types, derived from the server's TypeBox route schemas (src/server/http/schemas.ts)
 * with type-only imports: nothing of the server is loaded at run time.
 */
import type { Static } from "typebox";
import type {
  ApprovalSchema,
  CreateSessionBodySchema,
  LimitsSchema,
  ProcessOutputSchema,
  ProcessSchema,
  SessionSchema,
  StartProcessBodySchema,
  ToolResultSchema,
  ToolSelectionSchema,
} from "../server/http/schemas.js";

/** A session as the API shows it. */
export type SessionInfo = Static<typeof SessionSchema>;
/** JSON options of POST /v1/sessions. */
export type CreateSessionOptions = Static<typeof CreateSessionBodySchema>;
export type Limits = Static<typeof LimitsSchema>;
export type ToolSelection = Static<typeof ToolSelectionSchema>;
/** One finished call (Pi's ToolResultMessage). */
export type ToolResult = Static<typeof ToolResultSchema>;
/** A pending `ask` of the tenant. */
export type Approval = Static<typeof ApprovalSchema>;
/** `allow` (= `allow-once`), `allow-once`, `allow-session` or `deny`. */
export type ApprovalDecision = "allow" | "allow-once" | "allow-session" | "deny";

/** A background process as the API shows it. */
export type BackgroundProcess = Static<typeof ProcessSchema>;
/** Body of a process start: `command` is a script or `{argv}`; `pty` a terminal size. */
export type StartProcessInput = Static<typeof StartProcessBodySchema>;
/** A piece of a process's output: `data` is the bytes (the API's base64 decoded). */
export type ProcessOutput = Omit<Static<typeof ProcessOutputSchema>, "data"> & { data: Uint8Array };
/** A signal's name without SIG (the server's PROCESS_SIGNALS; test/unit/client checks they agree). */
export type ProcessSignalName =
  | "TERM"
  | "INT"
  | "KILL"
  | "HUP"
  | "QUIT"
  | "USR1"
  | "USR2"
  | "STOP"
  | "CONT"
  | "WINCH";

/** One tool call: `arguments` is the JSON object the model produced. */
export interface ToolCallInput {
  id: string;
  name: string;
  arguments: unknown;
}

/** Partial output of a running call. */
export interface ToolOutputView {
  content: ToolResult["content"];
  details?: unknown;
}

/** The events of a streamed batch, in the order the server sends them; `results` comes last. */
export type ToolCallEvent =
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; partial: ToolOutputView }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: ToolResult }
  | { type: "approval_requested"; approval: Approval }
  | { type: "results"; results: ToolResult[] };

/** One OpenAI `tools[]` entry. */
export interface ProviderTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
