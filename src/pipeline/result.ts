/**
 * Building ToolResultMessages: error results for every failing stage, and normalisation of what a
 * tool or hook returned into well-formed content blocks (Pi's ToolResultMessage shape).
 */
import { WardenError, type WardenErrorCode } from "../errors.js";
import type { ToolCall, ToolContent, ToolOutput, ToolResultMessage } from "../tools/index.js";

/** The pipeline stage a failure happened in; kept in error results' details. */
export type PipelineStage =
  | "batch"
  | "lookup"
  | "prepareArguments"
  | "validate"
  | "beforeToolCall"
  | "abort"
  | "execute"
  | "afterToolCall"
  | "normalise";

/** Details of an error result made by the pipeline: the stage, and the WardenError code when there was one. */
export interface PipelineErrorDetails {
  stage: PipelineStage;
  code?: WardenErrorCode;
  /** Details the thrown error carried (e.g. bash's exitCode and fullOutputPath). */
  [key: string]: unknown;
}

/** The message of anything thrown (Error.message, else its string form). */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return typeof err === "string" ? err : String(err);
}

/** An isError ToolResultMessage with one text block. */
export function errorResult<D extends PipelineErrorDetails>(
  call: Pick<ToolCall, "id" | "name">,
  text: string,
  details: D,
): ToolResultMessage<D> {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    details,
    isError: true,
    timestamp: Date.now(),
  };
}

/** An error result for a thrown value: its message as text, its WardenError code (if any) in details. */
export function thrownResult(
  call: Pick<ToolCall, "id" | "name">,
  err: unknown,
  stage: PipelineStage,
): ToolResultMessage<PipelineErrorDetails> {
  // A tool error may carry details of its own (bash: exit code, spill file); keep them, unlike Pi,
  // which drops details on a throw, so the spill path of a failed command still reaches the caller.
  const own = (err as { details?: unknown } | null)?.details;
  const details: PipelineErrorDetails = {
    ...(typeof own === "object" && own !== null && !Array.isArray(own) ? own : {}),
    stage,
  };
  if (err instanceof WardenError) details.code = err.code;
  return errorResult(call, errorText(err), details);
}

function normaliseBlock(block: unknown): ToolContent | undefined {
  if (typeof block !== "object" || block === null) return undefined;
  const b = block as Record<string, unknown>;
  if (b.type === "text")
    return { type: "text", text: typeof b.text === "string" ? b.text : String(b.text ?? "") };
  if (b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string") {
    return { type: "image", data: b.data, mimeType: b.mimeType };
  }
  return undefined;
}

/**
 * Normalises a tool's return value: `content` must be an array; blocks that are neither text nor image
 * are dropped; text is coerced to a string. Throws TypeError when the value is not a ToolOutput at all.
 */
export function normaliseOutput(raw: unknown): ToolOutput {
  if (typeof raw !== "object" || raw === null || !Array.isArray((raw as ToolOutput).content)) {
    throw new TypeError("Tool returned a malformed result: expected { content: [...] }.");
  }
  const output = raw as ToolOutput;
  const content = output.content.map(normaliseBlock).filter((b): b is ToolContent => b !== undefined);
  const normalised: ToolOutput = { content };
  if (output.details !== undefined) normalised.details = output.details;
  return normalised;
}

/** The ToolResultMessage for a finished call. */
export function resultMessage(call: ToolCall, output: ToolOutput, isError: boolean): ToolResultMessage {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: output.content,
    isError,
    timestamp: Date.now(),
  };
  if (output.details !== undefined) message.details = output.details;
  return message;
}
