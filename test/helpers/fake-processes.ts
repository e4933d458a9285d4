/**
 * An in-memory Processes for unit tests of the process tool and the policy: no engine. Each process
 * has an output buffer the test appends to, a state the test sets, and the calls made to it.
 */
import { NotFoundError, WardenError } from "../../src/errors.js";
import type {
  OutputSlice,
  Processes,
  ProcessInfo,
  ProcessLimits,
  ProcessRecord,
  ProcessSignal,
  StartProcessOptions,
} from "../../src/process/index.js";

/** One fake process: what it printed, its state, what it was sent. */
export interface FakeProcess {
  record: ProcessRecord;
  output: Buffer;
  /** Output before this offset is no longer kept. */
  keptFrom: number;
  droppedBytes: number;
  exited?: { code: number; signal?: number };
  input: Buffer[];
  inputClosed: boolean;
  signals: ProcessSignal[];
}

const STARTED_AT = "2026-12-07T21:00:00.000Z";

/** A Processes whose processes the test drives (`add`, `print`, `exit`); ids p1, p2, … in start order. */
export class FakeProcesses implements Processes {
  readonly processes = new Map<string, FakeProcess>();
  readonly starts: StartProcessOptions[] = [];
  readonly reads: { id: string; offset?: number; maxBytes?: number }[] = [];
  readonly waits: { id: string; timeoutMs?: number }[] = [];

  /** `limits.maxRunning`: a start past it is refused as the real one refuses it (CONFLICT). */
  constructor(readonly limits: Partial<ProcessLimits> = {}) {}

  /** Adds a process started with `command` (as start would), returning it. */
  add(command: ProcessRecord["command"], extra: Partial<ProcessRecord> = {}): FakeProcess {
    const id = `p${this.processes.size + 1}`;
    const record: ProcessRecord = {
      id,
      command,
      cwd: "/workspace",
      shimPid: 100,
      shimStartTime: 5000,
      commandPid: 101,
      startedAt: STARTED_AT,
      ...extra,
    };
    const p: FakeProcess = {
      record,
      output: Buffer.alloc(0),
      keptFrom: 0,
      droppedBytes: 0,
      input: [],
      inputClosed: false,
      signals: [],
    };
    this.processes.set(id, p);
    return p;
  }

  /** Appends output to process `id`. */
  print(id: string, text: string | Buffer): void {
    const p = this.get(id);
    p.output = Buffer.concat([p.output, typeof text === "string" ? Buffer.from(text, "utf8") : text]);
  }

  /** Ends process `id` with `code` (and the signal that ended it). */
  exit(id: string, code: number, signal?: number): void {
    this.get(id).exited = signal === undefined ? { code } : { code, signal };
  }

  get(id: string): FakeProcess {
    const p = this.processes.get(id);
    if (!p) throw new NotFoundError(`process ${id} not found`);
    return p;
  }

  infoOf(p: FakeProcess): ProcessInfo {
    const { record } = p;
    return {
      id: record.id,
      commandLine: "shell" in record.command ? record.command.shell : record.command.argv.join(" "),
      pty: record.pty !== undefined,
      state: p.exited ? "exited" : "running",
      ...(p.exited ? { exitCode: p.exited.code, endedAt: new Date("2026-12-07T21:05:00.000Z") } : {}),
      ...(p.exited?.signal !== undefined ? { exitSignal: p.exited.signal } : {}),
      startedAt: new Date(record.startedAt),
      outputBytes: p.output.length,
      keptFrom: p.keptFrom,
      droppedBytes: p.droppedBytes,
    };
  }

  async start(options: StartProcessOptions): Promise<ProcessInfo> {
    const running = [...this.processes.values()].filter((p) => !p.exited).length;
    if (this.limits.maxRunning !== undefined && running >= this.limits.maxRunning)
      throw new WardenError(
        "CONFLICT",
        `${running} processes are running, the session's limit; end one first.`,
      );
    this.starts.push(options);
    const p = this.add(options.command, {
      cwd: options.cwd ?? "/workspace",
      ...(options.pty ? { pty: options.pty } : {}),
    });
    return this.infoOf(p);
  }

  async list(): Promise<ProcessInfo[]> {
    return [...this.processes.values()].map((p) => this.infoOf(p));
  }

  async info(id: string): Promise<ProcessInfo> {
    return this.infoOf(this.get(id));
  }

  async read(id: string, options: { offset?: number; maxBytes?: number } = {}): Promise<OutputSlice> {
    this.reads.push({ id, ...options });
    const p = this.get(id);
    const asked = options.offset ?? 0;
    const offset = Math.min(Math.max(asked, p.keptFrom), p.output.length);
    const data = p.output.subarray(offset, offset + (options.maxBytes ?? 65536));
    return {
      offset,
      data,
      nextOffset: offset + data.length,
      skipped: Math.max(0, p.keptFrom - asked),
      process: this.infoOf(p),
    };
  }

  async write(id: string, data: Buffer): Promise<void> {
    const p = this.get(id);
    if (p.exited) throw new WardenError("CONFLICT", `process ${id} has exited`);
    p.input.push(data);
  }

  async closeInput(id: string): Promise<void> {
    this.get(id).inputClosed = true;
  }

  async kill(id: string, signal: ProcessSignal = "TERM"): Promise<void> {
    this.get(id).signals.push(signal);
  }

  async resize(id: string): Promise<void> {
    this.get(id);
  }

  async wait(id: string, options: { timeoutMs?: number } = {}): Promise<ProcessInfo> {
    this.waits.push({ id, ...options });
    return this.infoOf(this.get(id));
  }

  records(): ProcessRecord[] {
    return [...this.processes.values()].map((p) => p.record);
  }
}
