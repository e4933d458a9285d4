/**
 * warden run's retry policy for model requests. The openai SDK's own retries are off (maxRetries 0)
 * so this is the only policy, and it is testable: 401/403 fail at once, 429 waits per Retry-After,
 * 5xx and network errors back off exponentially; all bounded, then a clear ProviderError.
 */
import type { APIError } from "openai";
import { WardenError } from "../errors.js";
import { AbortError, isAbortError, onAbort, throwIfAborted } from "../util/index.js";
import { ProviderAuthError, ProviderError, ProviderRateLimitError } from "./errors.js";
import { loadOpenAI, type OpenAIModule } from "./openai-sdk.js";

/** Bounds of the retry policy. All times in ms. */
export interface RetryPolicy {
  /** Attempts in total (first try included). Default 4. */
  maxAttempts: number;
  /** First backoff for 5xx and network errors; doubles each retry. Default 500 ms. */
  baseDelayMs: number;
  /** Cap on any one wait, Retry-After included. Default 30 s. */
  maxDelayMs: number;
}

const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Reported before each wait, for the live view and logs. `delayMs` is the wait about to happen. */
export interface RetryNotice {
  attempt: number;
  delayMs: number;
  status: number | undefined;
  reason: string;
}

/** Options of withRetries. `keyEnv` names the key's variable in the 401 message. */
export interface WithRetriesOptions {
  policy?: Partial<RetryPolicy>;
  keyEnv: string;
  signal?: AbortSignal;
  onRetry?: (notice: RetryNotice) => void;
  /** Injectable wait (tests); default a timer that the signal cancels. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Parses Retry-After (seconds, or an HTTP date) and OpenAI's `retry-after-ms`, in ms; undefined when
 * absent or unparsable. Source: RFC 9110 §10.2.3.
 */
export function retryAfterMs(headers: Headers | undefined, nowMs = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** Default sleep: resolves after `ms`, rejects AbortError when the signal fires first. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    throwIfAborted(signal);
    const timer = setTimeout(() => {
      off();
      resolve();
    }, ms);
    const off = onAbort(signal, () => {
      clearTimeout(timer);
      reject(new AbortError());
    });
  });
}

function detailOf(err: unknown, sdk: OpenAIModule): string {
  if (err instanceof sdk.APIError) {
    const body = err.error as { message?: unknown } | undefined;
    return typeof body?.message === "string" ? body.message : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Node socket errors (ECONNRESET, ECONNREFUSED, ...) and undici's "terminated" mid-stream. */
function isNetworkError(err: unknown, sdk: OpenAIModule): boolean {
  if (!(err instanceof Error) || err instanceof sdk.APIError) return false;
  const code = (err as { code?: unknown }).code;
  return (typeof code === "string" && /^E[A-Z]+$/.test(code)) || err.message === "terminated";
}

/**
 * Runs `attempt` under the policy. Rejects ProviderAuthError (401/403, no retry),
 * ProviderRateLimitError (429 exhausted), ProviderError (5xx/network exhausted or other 4xx), or
 * AbortError when the signal fires. A WardenError from `attempt` is passed on as it is, not retried.
 */
export async function withRetries<T>(attempt: () => Promise<T>, options: WithRetriesOptions): Promise<T> {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const sleep = options.sleep ?? abortableSleep;
  for (let n = 1; ; n++) {
    throwIfAborted(options.signal);
    try {
      return await attempt();
    } catch (err) {
      // warden's own errors (ProviderStreamError, PackageMissingError) say what is wrong already.
      if (err instanceof WardenError) throw err;
      // The SDK whose errors are classified (loaded already by the request that failed).
      const sdk = await loadOpenAI();
      if (err instanceof sdk.APIUserAbortError || isAbortError(err) || options.signal?.aborted) {
        throw new AbortError();
      }
      const status = err instanceof sdk.APIError ? err.status : undefined;
      const detail = detailOf(err, sdk);
      if (status === 401 || status === 403) throw new ProviderAuthError(status, options.keyEnv, detail);
      const network = err instanceof sdk.APIConnectionError || isNetworkError(err, sdk);
      const retryable =
        status === 429 || status === 408 || (status !== undefined && status >= 500) || network;
      if (!retryable) throw new ProviderError(status, n, detail, { cause: err });
      if (n >= policy.maxAttempts) {
        if (status === 429) throw new ProviderRateLimitError(n, detail);
        throw new ProviderError(status, n, detail, { cause: err });
      }
      const backoff = policy.baseDelayMs * 2 ** (n - 1);
      const hinted =
        status === 429 && err instanceof sdk.APIError ? retryAfterMs((err as APIError).headers) : undefined;
      const delayMs = Math.min(policy.maxDelayMs, hinted ?? backoff);
      options.onRetry?.({ attempt: n, delayMs, status, reason: detail });
      await sleep(delayMs, options.signal);
    }
  }
}
