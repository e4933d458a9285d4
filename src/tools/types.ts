/**
 * Tool-call types, following the Pi coding agent's shapes (pi-mono coding-agent, see
 * shared/reference/pi-tool-semantics.md): a model emits ToolCalls, warden returns ToolResultMessages.
 */
import type { Static, TSchema } from "typebox";
import type { Processes } from "../process/index.js";
import type { ReadFileResult, ReadRange, Sandbox } from "../sandbox/index.js";

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

/**
 * Where a tool's full output is kept when truncation cuts it (see src/truncate). Files are named to
 * the model by a handle (`/spill/<name>`, spill-handle.ts), never by their host path; only the
 * session's own store resolves its handles, by exact name.
 */
export interface SpillStore {
  /** Creates an owner-only (0600) spill file and returns a writer for it. */
  create(prefix: string): Promise<SpillWriter>;
  /** True when `handle` is exactly the handle of a live spill file of this session. */
  owns(handle: string): boolean;
  /**
   * Reads a byte or line range of the spill file `handle` names (same contract as Sandbox.readFile).
   * Rejects NotFoundError for any other string (another session's handle, traversal, a host path).
   */
  read(handle: string, range: ReadRange): Promise<ReadFileResult>;
  /** Removes every spill file of the session (and gives their bytes back to any shared cap). Idempotent. */
  dispose(): Promise<void>;
}

/** A cap on spill bytes: the session's own, or one shared by a tenant's sessions (`warden serve`). */
export interface SpillCap {
  scope: "session" | "tenant";
  /** Bytes all spill files under this cap may hold together. */
  limitBytes: number;
  /** How the operator raises it, e.g. "--spill-max-bytes"; named in the notice of a cut result. */
  raiseHint: string;
}

/** What a spill file kept of the bytes written to it (SpillWriter.summary). */
export interface SpillSummary {
  /** The model-facing handle, `/spill/<name>`. */
  handle: string;
  /** Bytes in the file: the first `keptBytes` of the output. */
  keptBytes: number;
  /** Bytes offered to the file, kept or not. */
  totalBytes: number;
  /** The cap that stopped the file, when `keptBytes < totalBytes` because of one. */
  cappedBy?: SpillCap;
  /** The write error that stopped the file (e.g. ENOSPC on the host), when that happened first. */
  error?: string;
}

/** Append-only writer for one spill file. */
export interface SpillWriter {
  /** The model-facing handle, `/spill/<name>` (never a host path). */
  readonly handle: string;
  /**
   * Appends what the caps leave room for; the rest is counted in summary().totalBytes only. Never
   * throws. The write may finish later (in the background): the writer keeps `chunk` until then, so
   * the caller must not reuse its memory. Returns a promise when the writer's queue of pending
   * writes is full (backpressure): the caller stops producing until it resolves (an exec output
   * callback returns it, so the exec path pauses its stream), which keeps memory bounded without
   * writing on the event loop. It never rejects (a write error is in summary()).
   */
  write(chunk: Buffer): Promise<void> | undefined;
  /** What the file holds so far; final (a background write's error included) once close has resolved. */
  summary(): SpillSummary;
  /** Waits for the file's pending writes, then closes it. Idempotent. */
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
  /** The session's background processes (the process tool's); absent when the session has none. */
  processes?: Processes;
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
