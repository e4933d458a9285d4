/**
 * The model side of `warden run`: one streamed chat completion on any OpenAI-compatible server,
 * through the openai SDK (v6) with the SDK's retries off and warden's policy (retry.ts) on top.
 */
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ProviderTool } from "../pipeline/index.js";
import { omitUndefined } from "../util/index.js";
import { ModelNotConfiguredError, ProviderStreamError, unsetKeyMessage } from "./errors.js";
import { loadOpenAI } from "./openai-sdk.js";
import { type RetryNotice, type RetryPolicy, withRetries } from "./retry.js";

/** One tool call as streamed: `arguments` is the raw JSON text the model produced (maybe invalid). */
export interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One assistant message, assembled from the stream. `finishReason` as the server sent it. */
export interface AssistantTurn {
  content: string;
  toolCalls: StreamedToolCall[];
  finishReason: string | null;
}

/** Callbacks while one completion streams. */
export interface CompleteOptions {
  signal?: AbortSignal;
  /** Each piece of assistant text as it arrives. */
  onTextDelta?: (text: string) => void;
  /** Before each retry wait. A retried request streams again from the start. */
  onRetry?: (notice: RetryNotice) => void;
}

/** What the agent loop needs from a model: one streamed assistant turn per call. */
export interface ChatModel {
  readonly model: string;
  complete(
    messages: ChatCompletionMessageParam[],
    tools: ProviderTool[],
    options?: CompleteOptions,
  ): Promise<AssistantTurn>;
}

/** How to reach the model. `apiKeyEnv` is the variable the key came from (named in 401 messages). */
export interface ModelConfig {
  model: string;
  baseURL?: string;
  apiKey?: string;
  apiKeyEnv: string;
  retry?: Partial<RetryPolicy>;
  /** Per-request timeout in ms. Default 10 minutes. */
  timeoutMs?: number;
}

/** Default model name when --model is not given. */
const DEFAULT_MODEL = "gpt-4.1-mini";

/**
 * Resolves the model configuration from flags and the environment: key from `env[apiKeyEnv]`
 * (default OPENAI_API_KEY), base URL from the flag or OPENAI_BASE_URL. Throws ModelNotConfiguredError
 * when there is neither a key nor a base URL. A base URL without a key (Ollama, llama.cpp) is fine.
 */
export function resolveModelConfig(
  flags: { model?: string; baseUrl?: string; apiKeyEnv?: string },
  env: NodeJS.ProcessEnv = process.env,
): ModelConfig {
  const apiKeyEnv = flags.apiKeyEnv ?? "OPENAI_API_KEY";
  const apiKey = env[apiKeyEnv] || undefined;
  const baseURL = flags.baseUrl ?? (env.OPENAI_BASE_URL || undefined);
  if (!apiKey && flags.apiKeyEnv !== undefined) throw new ModelNotConfiguredError(unsetKeyMessage(apiKeyEnv));
  if (!apiKey && !baseURL) throw new ModelNotConfiguredError();
  return {
    model: flags.model ?? env.WARDEN_MODEL ?? DEFAULT_MODEL,
    ...omitUndefined({ baseURL, apiKey }),
    apiKeyEnv,
  };
}

/** Folds one chunk into the turn being assembled; tool calls are keyed by their delta `index`. */
function applyChunk(
  turn: AssistantTurn,
  byIndex: Map<number, StreamedToolCall>,
  chunk: ChatCompletionChunk,
): void {
  const choice = chunk.choices[0];
  if (!choice) return;
  for (const delta of choice.delta?.tool_calls ?? []) {
    let call = byIndex.get(delta.index);
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      byIndex.set(delta.index, call);
      turn.toolCalls.push(call);
    }
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
  }
  if (choice.finish_reason) turn.finishReason = choice.finish_reason;
}

/**
 * ChatModel on the openai SDK's streaming chat completions. The SDK (an optional package) is loaded
 * at the first request (loadOpenAI): a completion rejects PackageMissingError without it.
 */
export class OpenAIChatModel implements ChatModel {
  readonly model: string;
  private client: OpenAI | undefined;

  constructor(private readonly config: ModelConfig) {
    this.model = config.model;
  }

  private async openClient(): Promise<OpenAI> {
    const sdk = await loadOpenAI();
    this.client ??= new sdk.OpenAI({
      apiKey: this.config.apiKey ?? "no-key",
      baseURL: this.config.baseURL,
      maxRetries: 0,
      timeout: this.config.timeoutMs ?? 600_000,
    });
    return this.client;
  }

  /** Streams one turn; rejects ProviderAuthError, ProviderRateLimitError, ProviderError or AbortError. */
  complete(
    messages: ChatCompletionMessageParam[],
    tools: ProviderTool[],
    options: CompleteOptions = {},
  ): Promise<AssistantTurn> {
    return withRetries(
      () => this.once(messages, tools, options),
      omitUndefined({
        keyEnv: this.config.apiKeyEnv,
        policy: this.config.retry,
        signal: options.signal,
        onRetry: options.onRetry,
      }),
    );
  }

  private async once(
    messages: ChatCompletionMessageParam[],
    tools: ProviderTool[],
    options: CompleteOptions,
  ): Promise<AssistantTurn> {
    const client = await this.openClient();
    const { data: stream, response } = await client.chat.completions
      .create(
        {
          model: this.model,
          messages,
          stream: true,
          ...(tools.length > 0 ? { tools: tools as ChatCompletionTool[], parallel_tool_calls: true } : {}),
        },
        { signal: options.signal },
      )
      .withResponse();
    const turn: AssistantTurn = { content: "", toolCalls: [], finishReason: null };
    const byIndex = new Map<number, StreamedToolCall>();
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      const text = chunk.choices[0]?.delta?.content;
      if (text) {
        turn.content += text;
        options.onTextDelta?.(text);
      }
      applyChunk(turn, byIndex, chunk);
    }
    // The SDK reads a non-SSE body as an empty stream: without this, a server that ignores
    // `stream: true` would look like a model that answered nothing.
    if (chunks === 0) throw new ProviderStreamError(response.headers.get("content-type") ?? undefined);
    turn.toolCalls.forEach((call, i) => {
      if (!call.id) call.id = `call_${i}_${Math.random().toString(36).slice(2, 10)}`;
    });
    return turn;
  }
}
