/**
 * `Processes` over one Sandbox (types.ts): each start is a `spawn` through the sandbox's ProcessIO;
 * output, input, signals and the exit status are files in the process's directory (files.ts). The
 * records stay on the host: what the policy was told a process is never comes back from the
 * sandbox. Whether a process runs is whether its shim runs (its pid with its start time): a command
 * in the sandbox can write a false exit.json, but cannot make a dead shim live or a live one dead
 * without ending the process.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { InvalidArgumentError, NotFoundError, SandboxError, WardenError } from "../errors.js";
import type { ExecCommand, ProcessIO, Sandbox } from "../sandbox/index.js";
import { AbortError, omitUndefined, throwIfAborted } from "../util/index.js";
import {
  type ExitFile,
  PROCESS_ID,
  processDir,
  type RequestKind,
  readExitFile,
  readSegments,
  requestPath,
  type SegmentView,
  segmentReads,
  shimAlive,
} from "./files.js";
import { checkInputSize, checkTerminalSize, PROCESS_GRACE_MS, resolveProcessLimits } from "./limits.js";
import {
  type OutputSlice,
  PROCESS_SIGNALS,
  type Processes,
  type ProcessInfo,
  type ProcessLimits,
  type ProcessRecord,
  type ProcessSignal,
  type StartProcessOptions,
  type TerminalSize,
} from "./types.js";

/** Options of a session's processes. */
export interface ProcessesOptions {
  /** Limits over DEFAULT_PROCESS_LIMITS. */
  limits?: Partial<ProcessLimits>;
  /** The session's environment variables, under each start's own. */
  env?: Record<string, string>;
  /** Records of an adopted session (a server's), whose processes its sandbox still runs. */
  records?: readonly ProcessRecord[];
  /** Called after the records changed (a start, a forgotten process): a server keeps them. */
  onRecordsChanged?: (records: ProcessRecord[]) => void | Promise<void>;
}

/** Default and largest bytes of one read of output. */
const DEFAULT_READ_BYTES = 64 * 1024;
const MAX_READ_BYTES = 16 * 1024 * 1024;

/** The one line a command is shown as. */
function commandLine(command: ExecCommand): string {
  return "shell" in command ? command.shell : command.argv.join(" ");
}

/**
 * The background processes of `sandbox`. With `options.records` (adoption), first tells the helper
 * which shims are this session's (`keep`): any other shim is killed. Rejects SandboxError when the
 * sandbox has no ProcessIO (the docker-exec path, the memory backend, a helper before version 9).
 */
export async function openProcesses(sandbox: Sandbox, options: ProcessesOptions = {}): Promise<Processes> {
  const io = requireProcessIO(sandbox);
  const processes = new SandboxProcesses(sandbox, io, resolveProcessLimits(options.limits), options);
  // Also with no records: a shim a command started itself is killed (attack-procs F4).
  if (options.records)
    await io.keep(options.records.map((r) => ({ pid: r.shimPid, startTime: r.shimStartTime })));
  return processes;
}

function requireProcessIO(sandbox: Sandbox): ProcessIO {
  const io = sandbox.processIO;
  if (!io)
    throw new SandboxError(
      `Sandbox ${sandbox.info.sessionId} cannot run background processes: they need warden's channel (execPath "channel"), ` +
        `and it uses ${JSON.stringify(sandbox.info.execPath ?? "docker-exec")}; start the session with the channel.`,
    );
  return io;
}

class SandboxProcesses implements Processes {
  private readonly byId = new Map<string, ProcessRecord>();
  /** Exit files once read (a process that ended stays ended). */
  private readonly ended = new Map<string, ExitFile | "lost">();
  /** Segments of ended processes (final: see segmentsOf). */
  private readonly finalSegments = new Map<string, SegmentView>();
  private nextNumber = 1;
  private starting: Promise<unknown> = Promise.resolve();
  private seq = Date.now() * 100;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly io: ProcessIO,
    private readonly limits: ProcessLimits,
    private readonly options: ProcessesOptions,
  ) {
    for (const r of options.records ?? []) {
      this.byId.set(r.id, r);
      this.nextNumber = Math.max(this.nextNumber, Number(r.id.slice(1)) + 1);
    }
  }

  records(): ProcessRecord[] {
    return [...this.byId.values()];
  }

  /** Starts one at a time: two at once would both count the same running processes. */
  start(options: StartProcessOptions): Promise<ProcessInfo> {
    const run = this.starting.then(() => this.startNow(options));
    this.starting = run.catch(() => undefined);
    return run;
  }

  private async startNow(options: StartProcessOptions): Promise<ProcessInfo> {
    throwIfAborted(options.signal);
    if (options.pty) checkTerminalSize(options.pty, "pty");
    const records = [...this.byId.values()];
    const ends = await Promise.all(records.map((r) => this.endOf(r, options.signal)));
    const running = records.filter((_, i) => !ends[i]);
    if (running.length >= this.limits.maxRunning)
      throw new WardenError(
        "CONFLICT",
        `${running.length} background processes are running, the session's limit (processes.maxRunning ${this.limits.maxRunning}); ` +
          `stop one (kill ${running.map((p) => p.id).join(", ")}) or wait for one to end.`,
      );
    const id = `p${this.nextNumber++}`;
    const cwd = options.cwd ?? "/workspace";
    const started = await this.io.spawn(
      {
        dir: processDir(id),
        command: options.command,
        cwd,
        env: { ...this.options.env, ...options.env },
        segmentBytes: this.limits.segmentBytes,
        keepSegments: this.limits.keptOutputBytes / this.limits.segmentBytes,
        graceMs: PROCESS_GRACE_MS,
        ...(options.pty ? { pty: options.pty } : {}),
      },
      omitUndefined({ signal: options.signal }),
    );
    const record: ProcessRecord = {
      id,
      command: options.command,
      cwd,
      ...(options.pty ? { pty: options.pty } : {}),
      shimPid: started.pid,
      shimStartTime: started.startTime,
      commandPid: started.commandPid,
      startedAt: new Date().toISOString(),
    };
    this.byId.set(id, record);
    // Kept on the host first: whatever fails after this, the running process is the session's.
    await this.options.onRecordsChanged?.(this.records());
    if (options.signal?.aborted) {
      await this.kill(id, "KILL").catch(() => {});
      throw new AbortError();
    }
    if (await this.forgetOldExited()) await this.options.onRecordsChanged?.(this.records());
    return this.info(id);
  }

  async list(options: { signal?: AbortSignal } = {}): Promise<ProcessInfo[]> {
    return Promise.all([...this.byId.keys()].map((id) => this.info(id, options)));
  }

  async info(id: string, options: { signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    const record = this.record(id);
    // In this order: segments read after the end was seen are the whole output.
    const end = await this.endOf(record, options.signal);
    const view = await this.segmentsOf(id, end !== undefined, options.signal);
    const info: ProcessInfo = {
      id,
      commandLine: commandLine(record.command),
      pty: record.pty !== undefined,
      state: end ? "exited" : "running",
      startedAt: new Date(record.startedAt),
      outputBytes: view.outputBytes,
      keptFrom: view.keptFrom,
      droppedBytes: end && end !== "lost" ? end.droppedBytes : 0,
    };
    if (end && end !== "lost") {
      info.exitCode = end.code;
      if (end.signal !== undefined) info.exitSignal = end.signal;
      info.endedAt = new Date(end.endedAt);
    }
    return info;
  }

  async read(
    id: string,
    options: { offset?: number; maxBytes?: number; signal?: AbortSignal } = {},
  ): Promise<OutputSlice> {
    const offset = options.offset ?? 0;
    const maxBytes = options.maxBytes ?? DEFAULT_READ_BYTES;
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new InvalidArgumentError({
        field: "offset",
        problem: `must be a non-negative integer, got ${String(offset)}.`,
      });
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_READ_BYTES)
      throw new InvalidArgumentError({
        field: "maxBytes",
        problem: `must be an integer from 1 to ${MAX_READ_BYTES}, got ${String(maxBytes)}.`,
      });
    // A segment removed between the listing and the read (the output moved on): list again, once.
    for (let attempt = 0; ; attempt++) {
      const process = await this.info(id, options);
      if (offset > process.outputBytes)
        throw new InvalidArgumentError({
          field: "offset",
          problem: `${offset} is past the end of process ${id}'s output (${process.outputBytes} bytes so far); read from ${process.outputBytes} or less.`,
        });
      const start = Math.max(offset, process.keptFrom);
      const length = Math.min(maxBytes, process.outputBytes - start);
      try {
        const parts: Buffer[] = [];
        for (const r of segmentReads(start, length, this.limits.segmentBytes)) {
          const got = await this.sandbox.readFile(
            `${processDir(id)}/out/${r.segment}`,
            { kind: "bytes", offset: r.offset, length: r.length },
            omitUndefined({ signal: options.signal }),
          );
          parts.push(got.data);
          if (got.data.length < r.length) break;
        }
        const data = Buffer.concat(parts);
        return { offset: start, data, nextOffset: start + data.length, skipped: start - offset, process };
      } catch (err) {
        if (!(err instanceof NotFoundError) || attempt > 0) throw err;
      }
    }
  }

  async write(id: string, data: Buffer): Promise<void> {
    checkInputSize(data);
    await this.request(id, "data", data);
  }

  async closeInput(id: string): Promise<void> {
    await this.request(id, "eof", Buffer.alloc(0));
  }

  async kill(id: string, signal: ProcessSignal = "TERM"): Promise<void> {
    if (!(PROCESS_SIGNALS as readonly string[]).includes(signal))
      throw new InvalidArgumentError({
        field: "signal",
        problem: `must be one of ${PROCESS_SIGNALS.join(", ")}, got ${JSON.stringify(signal)}.`,
      });
    // Signalling a process that has ended is not an error: it is already stopped.
    if (await this.endOf(this.record(id))) return;
    await this.writeRequest(id, "signal", Buffer.from(signal));
  }

  async resize(id: string, size: TerminalSize): Promise<void> {
    checkTerminalSize(size, "size");
    if (!this.record(id).pty)
      throw new InvalidArgumentError(
        `Process ${id} has no terminal (it was started without pty); only a pty process can be resized.`,
      );
    await this.request(id, "resize", Buffer.from(`${size.cols} ${size.rows}`));
  }

  async wait(id: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    const deadline = performance.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
    for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
      const info = await this.info(id, options);
      const left = deadline - performance.now();
      if (info.state === "exited" || left <= 0) return info;
      await sleep(Math.min(pause, left), undefined, omitUndefined({ signal: options.signal })).catch(() => {
        throw new AbortError();
      });
    }
  }

  private record(id: string): ProcessRecord {
    const record = PROCESS_ID.test(id) ? this.byId.get(id) : undefined;
    if (!record)
      throw new NotFoundError(
        `No background process ${JSON.stringify(id)} in this session; list the processes to see their ids.`,
      );
    return record;
  }

  /**
   * The kept segments of `id`. Once the process had ended before they were read they no longer
   * change (its shim wrote all output before it exited), so they are read once and kept.
   */
  private async segmentsOf(id: string, ended: boolean, signal?: AbortSignal): Promise<SegmentView> {
    const known = this.finalSegments.get(id);
    if (known) return known;
    const view = await readSegments(this.sandbox, id, this.limits.segmentBytes, signal);
    if (ended) this.finalSegments.set(id, view);
    return view;
  }

  /** How a process ended, or undefined while its shim runs. */
  private async endOf(record: ProcessRecord, signal?: AbortSignal): Promise<ExitFile | "lost" | undefined> {
    const known = this.ended.get(record.id);
    if (known) return known;
    if (await shimAlive(this.sandbox, record.shimPid, record.shimStartTime, signal)) return undefined;
    const end = (await readExitFile(this.sandbox, record.id, signal)) ?? "lost";
    this.ended.set(record.id, end);
    return end;
  }

  /** Writes one request file for the shim; ConflictError once the process has ended. */
  private async request(id: string, kind: RequestKind, data: Buffer): Promise<void> {
    const record = this.record(id);
    if (await this.endOf(record))
      throw new WardenError(
        "CONFLICT",
        `Background process ${id} has exited; it takes no more input or signals.`,
      );
    await this.writeRequest(id, kind, data);
  }

  /** Writes one request file for the shim of a process known to run. */
  private async writeRequest(id: string, kind: RequestKind, data: Buffer): Promise<void> {
    await this.sandbox.writeFile(requestPath(id, ++this.seq, kind), data, { mode: 0o600 });
  }

  /**
   * Forgets the oldest exited processes beyond maxExited and removes their files (best effort: a
   * directory a command made undeletable stays, attack-procs F2); true when it forgot any.
   */
  private async forgetOldExited(): Promise<boolean> {
    const exited = [...this.byId.keys()].filter((id) => this.ended.has(id));
    const extra = exited.length - this.limits.maxExited;
    if (extra <= 0) return false;
    const gone = exited.slice(0, extra);
    for (const id of gone) {
      this.byId.delete(id);
      this.ended.delete(id);
      this.finalSegments.delete(id);
    }
    await this.sandbox
      .exec({ argv: ["rm", "-rf", "--", ...gone.map(processDir)] }, { timeoutMs: 30_000 })
      .catch(() => {});
    return true;
  }
}
