/**
 * Errors of `warden run`'s model side: provider failures and missing model configuration.
 * Every one is a WardenError with a stable code and a message that says what to do.
 */
import { WardenError } from "../errors.js";

/** The provider refused the API key (HTTP 401/403). The message names the variable the key came from. */
export class ProviderAuthError extends WardenError {
  constructor(
    readonly status: number,
    readonly keyEnv: string,
    detail: string,
  ) {
    super(
      "UNAUTHORIZED",
      `The model provider rejected the API key (HTTP ${status}: ${detail}). ` +
        `Check the key in the environment variable ${keyEnv}, or name another variable with --api-key-env NAME.`,
    );
  }
}

/** Still rate limited (HTTP 429) after the bounded retries. */
export class ProviderRateLimitError extends WardenError {
  constructor(
    readonly attempts: number,
    detail: string,
  ) {
    super(
      "RATE_LIMITED",
      `The model provider kept answering 429 Too Many Requests after ${attempts} attempts (${detail}). ` +
        "Wait and run again, or raise your provider's rate limit.",
    );
  }
}

/**
 * Any other provider failure: a 5xx or network error still failing after the bounded retries, or a
 * non-retryable 4xx (bad model name, bad request). `status` is undefined for network errors.
 */
export class ProviderError extends WardenError {
  constructor(
    readonly status: number | undefined,
    readonly attempts: number,
    detail: string,
    options?: { cause?: unknown },
  ) {
    const what = status === undefined ? "could not be reached" : `answered HTTP ${status}`;
    super(
      "PROVIDER_ERROR",
      `The model provider ${what} (${detail}) after ${attempts} attempt${attempts === 1 ? "" : "s"}. ${hintFor(status)}`,
      options,
    );
  }
}

/**
 * What to check for a failed request: a 404 is most often a base URL without the API's path
 * (`/v1`); a 400 or 422 a model name the server lacks or a request it cannot take, and warden's
 * requests always stream (`stream: true`) and carry tools, which some servers refuse.
 */
function hintFor(status: number | undefined): string {
  if (status === 404)
    return "Check --base-url (OpenAI-compatible servers serve the API under a path, most often /v1) and --model.";
  if (status === 400 || status === 422)
    return "Check --model, and that the server takes streamed chat completions with tools: warden run sends stream: true and a tools list on every request.";
  return "Check --base-url and --model, and that the server is up.";
}

/**
 * The server answered a streamed request (`stream: true`) with no server-sent events: most often a
 * whole JSON completion from a server that ignores `stream`. warden run needs the streamed form
 * (OpenAI chat completions streaming, `text/event-stream`); nothing is retried.
 */
export class ProviderStreamError extends WardenError {
  constructor(contentType: string | undefined) {
    super(
      "PROVIDER_ERROR",
      `The model provider answered without streaming (content-type ${contentType ?? "none"}, no server-sent events), ` +
        "but warden run sends stream: true and reads the answer as it streams. Use a server or endpoint that streams " +
        "OpenAI chat completions (vLLM, Ollama and llama.cpp's server do), or turn streaming on in its settings.",
    );
  }
}

/** Exact text `warden run` prints when neither an API key nor a base URL is configured. */
export const NO_MODEL_MESSAGE = [
  "warden run needs a model, and none is configured.",
  "Configure one of:",
  "  - OpenAI:  export OPENAI_API_KEY=sk-...   (optionally --model gpt-4.1-mini)",
  "  - a key in another variable:  --api-key-env NAME",
  "  - any OpenAI-compatible server (vLLM, Ollama, llama.cpp):",
  "      --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder",
  "Without a model, 'warden replay <transcript.jsonl>' runs recorded tool calls in the sandbox.",
].join("\n");

/**
 * No API key and no base URL (NO_MODEL_MESSAGE), or the variable `--api-key-env` names is unset:
 * `warden run` cannot reach the model. Exit code 2.
 */
export class ModelNotConfiguredError extends WardenError {
  constructor(message = NO_MODEL_MESSAGE) {
    super("INVALID_ARGUMENT", message);
  }
}

/** The message for `--api-key-env NAME` when NAME is unset or empty. */
export function unsetKeyMessage(name: string): string {
  return `--api-key-env ${name}: the environment variable ${name} is not set (or is empty). Set it (export ${name}=…) or drop --api-key-env.`;
}
