/**
 * A session's background processes through `warden serve` (/v1/sessions/:id/processes): what
 * WardenClient.processes(sessionId) returns. Output comes back as bytes (the API carries them in
 * base64) with the offset to read next.
 */
import { type AttachConnect, type AttachHandlers, openAttachment, type ProcessAttachment } from "./attach.js";
import type { BackgroundProcess, ProcessOutput, ProcessSignalName, StartProcessInput } from "./types.js";

/** One request of WardenClient, as its processes use it (JSON in, parsed JSON or nothing out). */
export type ProcessRequest = <T>(spec: {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  signal?: AbortSignal;
}) => Promise<T>;

type Call = { signal?: AbortSignal };

/** The background processes of one session (see the file comment). Methods reject like WardenClient's. */
export class SessionProcessesClient {
  private readonly base: string;

  constructor(
    private readonly send: ProcessRequest,
    sessionId: string,
    private readonly connect: AttachConnect,
  ) {
    this.base = `/v1/sessions/${encodeURIComponent(sessionId)}/processes`;
  }

  /** Starts a process: a script (`bash -c`) or `{argv}`; ConflictError at the session's running limit. */
  start(input: StartProcessInput, call: Call = {}): Promise<BackgroundProcess> {
    return this.send({ method: "POST", path: this.base, json: input, ...call });
  }

  /** Every process the session still knows, in start order. */
  async list(call: Call = {}): Promise<BackgroundProcess[]> {
    return (await this.send<{ processes: BackgroundProcess[] }>({ method: "GET", path: this.base, ...call }))
      .processes;
  }

  /** One process; NotFoundError for an unknown id. */
  get(pid: string, call: Call = {}): Promise<BackgroundProcess> {
    return this.send({ method: "GET", path: this.path(pid), ...call });
  }

  /** Output from `offset` (default 0), at most `maxBytes` (default 64 KiB), as bytes. */
  async output(
    pid: string,
    options: { offset?: number; maxBytes?: number } & Call = {},
  ): Promise<ProcessOutput> {
    const { signal, ...query } = options;
    const answer = await this.send<Omit<ProcessOutput, "data"> & { data: string }>({
      method: "GET",
      path: `${this.path(pid)}/output`,
      query,
      ...(signal ? { signal } : {}),
    });
    return { ...answer, data: Uint8Array.from(atob(answer.data), (c) => c.charCodeAt(0)) };
  }

  /** Sends input (a string is sent as UTF-8); `close` then closes stdin. ConflictError once it has exited. */
  async input(
    pid: string,
    data: string | Uint8Array,
    options: { close?: boolean } & Call = {},
  ): Promise<void> {
    const { signal, close } = options;
    const body = typeof data === "string" ? { text: data } : { base64: btoa(String.fromCharCode(...data)) };
    await this.send({
      method: "POST",
      path: `${this.path(pid)}/input`,
      json: { ...body, ...(close ? { close } : {}) },
      ...(signal ? { signal } : {}),
    });
  }

  /** Sends a signal (default TERM) to its process group; a process that has exited is left as it is. */
  async signal(pid: string, signal: ProcessSignalName = "TERM", call: Call = {}): Promise<void> {
    await this.send({ method: "POST", path: `${this.path(pid)}/signal`, json: { signal }, ...call });
  }

  /** Changes a terminal process's size. */
  async resize(pid: string, size: { cols: number; rows: number }, call: Call = {}): Promise<void> {
    await this.send({ method: "POST", path: `${this.path(pid)}/resize`, json: size, ...call });
  }

  /** Waits at most `timeoutMs` (default 30 000, at most 60 000) for it to exit; resolves its state either way. */
  wait(pid: string, options: { timeoutMs?: number } & Call = {}): Promise<BackgroundProcess> {
    const { signal, timeoutMs } = options;
    return this.send({
      method: "POST",
      path: `${this.path(pid)}/wait`,
      query: { timeoutMs },
      ...(signal ? { signal } : {}),
    });
  }

  /**
   * Attaches over a WebSocket (the platform's global one; see ./attach.ts): output from `offset`
   * (default the output's current end) goes to `onOutput`. Resolves once attached; rejects
   * NotFoundError for an unknown process or session, ConflictError for a session without processes.
   */
  attach(pid: string, options: { offset?: number } & AttachHandlers = {}): Promise<ProcessAttachment> {
    const { offset, ...handlers } = options;
    const socket = this.connect(
      `${this.path(pid)}/attach`,
      offset === undefined ? {} : { offset: String(offset) },
    );
    return openAttachment(socket, handlers, () => this.get(pid));
  }

  private path(pid: string): string {
    return `${this.base}/${encodeURIComponent(pid)}`;
  }
}
