/**
 * Tool-call types, following the Pi coding agent's shapes (pi-mono coding-agent, see
 * shared/reference/pi-tool-semantics.md): a model emits ToolCalls, warden returns ToolResultMessages.
 */
import type { Static, TSchema } from "typebox";
import type { ReadFileResult, ReadRange, Sandbox } from "../sandbox/types.js";

/** A tool call as a model emits it. `arguments` is the parsed JSON object (or the raw string when it was not JSON). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** Text content block. */
export interface TextContent {
  type: "text";
  text: string;
}

/** Image content block: base64 data and its MIME type. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

export type ToolContent = TextContent | ImageContent;

/** What a tool's execute returns (Pi's AgentToolResult). `details` is for UIs and logs, not the model. */
export interface ToolOutput<TDetails = unknown> {
  content: ToolContent[];
  details?: TDetails;
}

/** The protocol message for one finished call (Pi's ToolResultMessage). `timestamp` is epoch ms. */
export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: ToolContent[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
}

/** Where a tool's full output is kept when truncation cuts it (see src/truncate). */
export interface SpillStore {
  /** Creates an owner-only (0600) spill file and returns a writer for it. */
  create(prefix: string): Promise<SpillWriter>;
  /** True when `path` names a spill file of this session (the read tool opens those on the host). */
  owns(path: string): boolean;
  /** Reads a byte or line range of one of this session's spill files (same contract as Sandbox.readFile). */
  read(path: string, range: ReadRange): Promise<ReadFileResult>;
  /** Removes every spill file of the session. Idempotent. */
  dispose(): Promise<void>;
}

/** Append-only writer for one spill file. */
export interface SpillWriter {
  readonly path: string;
  write(chunk: Buffer): void;
  close(): Promise<void>;
  /** Closes and deletes the file (the output was not cut, so nothing needs keeping). Idempotent. */
  discard(): Promise<void>;
}

/** What every tool execution gets besides its arguments. */
export interface ToolContext {
  sandbox: Sandbox;
  spill: SpillStore;
  signal?: AbortSignal;
  /** Streams a partial result (throttled by the pipeline to at most 10 per second). */
  onUpdate?: (partial: ToolOutput) => void;
}

/**
 * A tool: Pi's AgentTool, with I/O only through the ToolContext's sandbox.
 * `execute` throws on failure; the pipeline turns the throw into an isError result.
 */
export interface Tool<TSchemaT extends TSchema = TSchema, TDetails = unknown> {
  name: string;
  label: string;
  /** Shown to the model. */
  description: string;
  parameters: TSchemaT;
  /** Reshapes known legacy argument forms before validation (Pi's prepareArguments). */
  prepareArguments?: (raw: unknown) => unknown;
  /** "sequential" makes any batch containing this tool run one call at a time. Default "parallel". */
  executionMode?: "sequential" | "parallel";
  /** edit and write: serialised per canonical path (the file-mutation queue). */
  mutatesPath?: (args: Static<TSchemaT>) => string;
  execute(toolCallId: string, args: Static<TSchemaT>, ctx: ToolContext): Promise<ToolOutput<TDetails>>;
}

/** A tool with its schema type erased, as kept in registries. */
// biome-ignore lint/suspicious/noExplicitAny: registries hold tools of many argument types
export type AnyTool = Tool<any, unknown>;
