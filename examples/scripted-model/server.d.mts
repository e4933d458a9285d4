/** Types of server.mjs, for TypeScript callers (test/helpers/openai-test-server.ts). Docs are in server.mjs. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** One tool call of a turn. `arguments`: an object is sent as JSON, a string verbatim (it may be invalid JSON on purpose). */
export interface ScriptedToolCall {
  /** Default `call_scripted_<n>`. */
  id?: string;
  name: string;
  arguments?: string | Record<string, unknown>;
}

/** One assistant turn, streamed. */
export interface ScriptedTurn {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default "tool_calls" when there are calls, else "stop". */
  finishReason?: "stop" | "tool_calls" | "length";
  /** Characters per content/arguments chunk. Default 7. */
  chunkChars?: number;
}

/** A script file, as readScript returns it. */
export interface Script {
  task: string;
  turns: ScriptedTurn[];
  final: string;
}

/** Options of startScriptedModel; `E` is a script entry (a turn, or what `respond` answers itself). */
export interface ScriptedModelOptions<E = ScriptedTurn> {
  turns?: E[];
  final?: string | ScriptedTurn;
  restart?: boolean;
  model?: string;
  host?: string;
  port?: number;
  onRequest?(req: IncomingMessage, body: Record<string, unknown>): void;
  respond?(res: ServerResponse, entry: E | undefined, body: Record<string, unknown>): boolean;
}

/** A running scripted model. `baseURL` ends in /v1, as the openai client expects. */
export interface ScriptedModel<E = ScriptedTurn> {
  baseURL: string;
  port: number;
  push(...entries: E[]): void;
  close(): Promise<void>;
}

export const DEFAULT_PORT: number;
export const DEFAULT_SCRIPT: string;
export const FINAL_TEXT: string;
export const MAX_BODY_BYTES: number;
export function writeStreamedTurn(res: ServerResponse, turn: ScriptedTurn, model?: string): void;
export function readScript(file: string): Script;
export function startScriptedModel<E = ScriptedTurn>(
  options?: ScriptedModelOptions<E>,
): Promise<ScriptedModel<E>>;
