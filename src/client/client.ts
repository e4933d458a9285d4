/**
 * WardenClient: a typed client of `warden serve` (the `warden/client` package export) on the
 * platform's fetch. Sessions, tool calls (whole, or streamed over SSE as an async iterator),
 * approvals, the workspace as tar and its changes as a patch, background processes (processes.ts). Error answers throw the classes of
 * errors.ts; a 429 is retried after the server's Retry-After (at most `maxRetries` times, each wait
 * at most `maxRetryDelayMs`) when the request body can be sent again.
 */
import { HTTP_STATUS, type WardenErrorCode } from "../errors.js";
import { errorFromResponse, RateLimitedError, WardenApiError } from "./errors.js";
import { SessionProcessesClient } from "./processes.js";
import { parseSse } from "./sse.js";
import type {
  Approval,
  ApprovalDecision,
  CreateSessionOptions,
  ProviderTool,
  SessionInfo,
  ToolCallEvent,
  ToolCallInput,
  ToolResult,
} from "./types.js";

/** Options of WardenClient. */
export interface WardenClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The tenant's bearer key. */
  apiKey: string;
  /** Retries of a 429 answer (default 3; 0 turns retrying off). */
  maxRetries?: number;
  /** Longest wait before one retry, ms (default 30 000); a longer Retry-After is cut to it. */
  maxRetryDelayMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** Per-call options: every call can be aborted. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of a session created from a workspace tar (copy mode); limits flat, as the query string takes them. */
export interface TarSessionOptions extends CallOptions {
  image?: string;
  cpus?: number;
  memoryBytes?: number;
  workspaceBytes?: number;
  tools?: string[];
}

interface RequestSpec extends CallOptions {
  method: string;
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Uint8Array;
  headers?: Record<string, string>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A client of one tenant on one server. */
export class WardenClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;

  constructor(private readonly options: WardenClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  }

  /** Sends one request, retrying 429s; resolves with a 2xx response, rejects with a WardenApiError. */
  private async request(spec: RequestSpec): Promise<Response> {
    const url = new URL(`${this.baseUrl}${spec.path}`);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      ...spec.headers,
    };
    let body: string | Uint8Array | undefined = spec.body;
    if (spec.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(spec.json);
    }
    for (let attempt = 0; ; attempt++) {
      const response = await this.fetchImpl(url, {
        method: spec.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(spec.signal !== undefined ? { signal: spec.signal } : {}),
      });
      if (response.ok) return response;
      const error = await errorFromResponse(response);
      if (!(error instanceof RateLimitedError) || attempt >= this.maxRetries) throw error;
      await sleep(Math.min(error.retryAfterSeconds * 1000, this.maxRetryDelayMs), spec.signal);
    }
  }

  private async json<T>(spec: RequestSpec): Promise<T> {
    return (await (await this.request(spec)).json()) as T;
  }

  /** The one field `key` of a JSON response object (`{sessions: […]}` → the list). */
  private async jsonField<T>(key: string, spec: RequestSpec): Promise<T> {
    return (await this.json<Record<string, T>>(spec))[key] as T;
  }

  /** POST /v1/sessions with JSON options. Rejects InvalidArgumentError (naming the field), RateLimitedError. */
  createSession(options: CreateSessionOptions = {}, call: CallOptions = {}): Promise<SessionInfo> {
    return this.json({
      method: "POST",
      path: "/v1/sessions",
      json: options,
      ...(call.signal !== undefined ? { signal: call.signal } : {}),
    });
  }

  /** POST /v1/sessions with a workspace tar (copy mode); `tar` is the archive's bytes. */
  createSessionFromTar(tar: Uint8Array, options: TarSessionOptions = {}): Promise<SessionInfo> {
    const { signal, tools, ...query } = options;
    return this.json({
      method: "POST",
      path: "/v1/sessions",
      query: { ...query, tools: tools?.join(",") },
      body: tar,
      headers: { "content-type": "application/x-tar" },
      ...(signal !== undefined ? { signal } : {}),
    });
  }

  /** The caller's live sessions. */
  listSessions(call: CallOptions = {}): Promise<SessionInfo[]> {
    return this.jsonField("sessions", { method: "GET", path: "/v1/sessions", ...call });
  }

  /** One session; NotFoundError for an unknown (or another tenant's) id. */
  getSession(id: string, call: CallOptions = {}): Promise<SessionInfo> {
    return this.json({ method: "GET", path: `/v1/sessions/${encodeURIComponent(id)}`, ...call });
  }

  /** Closes a session and removes its sandbox. */
  async deleteSession(id: string, call: CallOptions = {}): Promise<void> {
    await this.request({ method: "DELETE", path: `/v1/sessions/${encodeURIComponent(id)}`, ...call });
  }

  /** The session's enabled tools as OpenAI `tools[]` entries. */
  tools(id: string, call: CallOptions = {}): Promise<ProviderTool[]> {
    return this.jsonField("tools", { method: "GET", path: "/v1/tools", query: { session: id }, ...call });
  }

  /** Runs one batch; the results come in call order. A tool error is a result with isError, not a throw. */
  runToolCalls(id: string, toolCalls: ToolCallInput[], call: CallOptions = {}): Promise<ToolResult[]> {
    return this.jsonField("results", {
      method: "POST",
      path: `/v1/sessions/${encodeURIComponent(id)}/tool-calls`,
      json: { toolCalls },
      ...call,
    });
  }

  /**
   * Runs one batch over SSE: yields start, update and end events (and approval_requested for an
   * `ask`) as they happen, then one `results` event. Breaking out of the loop or aborting `signal`
   * disconnects, which aborts the calls on the server. An `error` event throws its WardenApiError.
   */
  async *streamToolCalls(
    id: string,
    toolCalls: ToolCallInput[],
    call: CallOptions = {},
  ): AsyncGenerator<ToolCallEvent> {
    const controller = new AbortController();
    const signal = call.signal ? AbortSignal.any([call.signal, controller.signal]) : controller.signal;
    const response = await this.request({
      method: "POST",
      path: `/v1/sessions/${encodeURIComponent(id)}/tool-calls`,
      json: { toolCalls },
      headers: { accept: "text/event-stream" },
      signal,
    });
    if (!response.body) throw new WardenApiError("INTERNAL", response.status, "The stream has no body.");
    try {
      for await (const { event, data } of parseSse(response.body)) {
        const value = JSON.parse(data) as Record<string, unknown>;
        if (event === "error") {
          const code = String(value.code ?? "INTERNAL");
          const status = HTTP_STATUS[code as WardenErrorCode] ?? 500;
          throw new WardenApiError(code, status, String(value.message ?? "The batch failed."));
        }
        if (event === "approval_requested") yield { type: event, approval: value as unknown as Approval };
        else if (event === "results") yield { type: event, results: value.results as ToolResult[] };
        else yield value as unknown as ToolCallEvent;
      }
    } finally {
      controller.abort();
    }
  }

  /** The tenant's pending approval requests. */
  listApprovals(call: CallOptions = {}): Promise<Approval[]> {
    return this.jsonField("approvals", { method: "GET", path: "/v1/approvals", ...call });
  }

  /** Answers a pending request; NotFoundError when it was already answered or timed out. */
  async answerApproval(
    approvalId: string,
    decision: ApprovalDecision,
    call: CallOptions = {},
  ): Promise<void> {
    await this.request({
      method: "POST",
      path: `/v1/approvals/${encodeURIComponent(approvalId)}`,
      json: { decision },
      ...call,
    });
  }

  /** The session's workspace as a tar archive's bytes. */
  async downloadWorkspace(id: string, call: CallOptions = {}): Promise<Uint8Array> {
    const response = await this.request({
      method: "GET",
      path: `/v1/sessions/${encodeURIComponent(id)}/workspace`,
      ...call,
    });
    return new Uint8Array(await response.arrayBuffer());
  }

  /** Writes one workspace file (PUT /v1/sessions/:id/files); never through a symlink. Resolves the canonical path. */
  async writeFile(
    id: string,
    path: string,
    data: Uint8Array | string,
    call: CallOptions = {},
  ): Promise<{ path: string; bytes: number }> {
    const response = await this.request({
      method: "PUT",
      path: `/v1/sessions/${encodeURIComponent(id)}/files`,
      query: { path },
      body: typeof data === "string" ? new TextEncoder().encode(data) : data,
      headers: { "content-type": "application/octet-stream" },
      ...call,
    });
    return (await response.json()) as { path: string; bytes: number };
  }

  /** One workspace file's bytes (GET /v1/sessions/:id/files); NotFoundError when there is none. */
  async readFile(id: string, path: string, call: CallOptions = {}): Promise<Uint8Array> {
    const response = await this.request({
      method: "GET",
      path: `/v1/sessions/${encodeURIComponent(id)}/files`,
      query: { path },
      ...call,
    });
    return new Uint8Array(await response.arrayBuffer());
  }

  /** The background processes of session `id` (/v1/sessions/:id/processes). */
  processes(id: string): SessionProcessesClient {
    return new SessionProcessesClient(
      async <T>(spec: RequestSpec) => {
        const response = await this.request(spec);
        return (response.status === 204 ? undefined : await response.json()) as T;
      },
      id,
      (path, query) => {
        const url = new URL(`${this.baseUrl}${path}`);
        url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
        for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
        // Node's global WebSocket (undici) takes headers: the key goes as on every request.
        return new WebSocket(url, { headers: { authorization: `Bearer ${this.options.apiKey}` } });
      },
    );
  }

  /** The session's changes as a unified patch (`git apply` takes it); empty when nothing changed. */
  async changes(id: string, call: CallOptions = {}): Promise<string> {
    const response = await this.request({
      method: "GET",
      path: `/v1/sessions/${encodeURIComponent(id)}/changes`,
      ...call,
    });
    return response.text();
  }
}
