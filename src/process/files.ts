/**
 * Where a background process's files live in the sandbox, and how the controller reads them. The
 * shim (images/sandbox/helper, `--proc-run`) writes `out/<n>` and `exit.json`; the controller
 * writes requests into `in/` and reads the rest. Pure functions but for the reads, which go
 * through the Sandbox's file operations.
 */
import { NotFoundError, SandboxError } from "../errors.js";
import type { Sandbox } from "../sandbox/index.js";
import { omitUndefined } from "../util/index.js";

/** The parent of every process directory; under /tmp, so its files count against the /tmp tmpfs. */
const PROCS_DIR = "/tmp/.warden/procs";

/** A process id: `p1`, `p2`, … */
export const PROCESS_ID = /^p[1-9][0-9]{0,8}$/;

/** The directory of process `id`. */
export function processDir(id: string): string {
  return `${PROCS_DIR}/${id}`;
}

/** The kinds of request files the shim reads from `in/`. */
export type RequestKind = "data" | "eof" | "signal" | "resize";

/** `in/<seq>.<kind>`: seq is 16 digits, so names sort in the order they were written. */
export function requestPath(id: string, seq: number, kind: RequestKind): string {
  return `${processDir(id)}/in/${String(seq).padStart(16, "0")}.${kind}`;
}

/** What `exit.json` says once the process has ended. */
export interface ExitFile {
  code: number;
  signal?: number;
  endedAt: number;
  outputBytes: number;
  droppedBytes: number;
}

/** The kept segments of a process's output: numbers in order, and the stream's length. */
export interface SegmentView {
  /** Segment numbers present, ascending (each holds bytes [n*S, (n+1)*S)). */
  segments: number[];
  /** The first offset still kept (0 before anything was dropped). */
  keptFrom: number;
  /** The stream's length so far. */
  outputBytes: number;
}

/**
 * Reads `exit.json`, or null while the process runs (no file yet). Throws SandboxError when the
 * file is not what the shim writes.
 */
export async function readExitFile(
  sandbox: Sandbox,
  id: string,
  signal?: AbortSignal,
): Promise<ExitFile | null> {
  let text: string;
  try {
    const r = await sandbox.readFile(
      `${processDir(id)}/exit.json`,
      { kind: "bytes", offset: 0, length: 4096 },
      omitUndefined({ signal }),
    );
    text = r.data.toString("utf8");
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
  return parseExitFile(text, id);
}

/** Parses `exit.json`'s text; throws SandboxError naming the process when it is malformed. */
export function parseExitFile(text: string, id: string): ExitFile {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  const r = v as Partial<ExitFile> | undefined;
  const count = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (!r || !count(r.code) || !count(r.endedAt) || !count(r.outputBytes) || !count(r.droppedBytes))
    throw new SandboxError(
      `The exit status of background process ${id} is malformed in the sandbox (${PROCS_DIR}/${id}/exit.json).`,
    );
  return {
    code: r.code as number,
    ...(count(r.signal) && (r.signal as number) > 0 ? { signal: r.signal as number } : {}),
    endedAt: r.endedAt as number,
    outputBytes: r.outputBytes as number,
    droppedBytes: r.droppedBytes as number,
  };
}

/** Lists `out/` and sizes its last segment: which bytes of the stream are kept. */
export async function readSegments(
  sandbox: Sandbox,
  id: string,
  segmentBytes: number,
  signal?: AbortSignal,
): Promise<SegmentView> {
  const dir = `${processDir(id)}/out`;
  let entries: Awaited<ReturnType<Sandbox["listDir"]>>;
  try {
    entries = await sandbox.listDir(dir, omitUndefined({ signal }));
  } catch (err) {
    // A command moved or removed out/ (the files are the sandbox user's): no output is kept, and
    // the session's other processes stay reachable (attack-procs F2).
    if (err instanceof NotFoundError) return { segments: [], keptFrom: 0, outputBytes: 0 };
    throw err;
  }
  const segments = entries
    .filter((e) => e.type === "file" && /^(0|[1-9][0-9]{0,15})$/.test(e.name))
    .map((e) => Number(e.name))
    .sort((a, b) => a - b);
  const last = segments.at(-1);
  if (last === undefined) return { segments, keptFrom: 0, outputBytes: 0 };
  const stat = await sandbox.stat(`${dir}/${last}`, omitUndefined({ signal }));
  return segmentView(segments, stat?.size ?? 0, segmentBytes);
}

/** The view of `segments` (ascending) whose last one holds `lastSize` bytes. */
export function segmentView(segments: number[], lastSize: number, segmentBytes: number): SegmentView {
  const first = segments[0];
  const last = segments.at(-1);
  if (first === undefined || last === undefined) return { segments, keptFrom: 0, outputBytes: 0 };
  return { segments, keptFrom: first * segmentBytes, outputBytes: last * segmentBytes + lastSize };
}

/**
 * The reads that carry [start, start + length) of the stream, one per segment it crosses:
 * `{segment, offset, length}` with offset inside the segment.
 */
export function segmentReads(
  start: number,
  length: number,
  segmentBytes: number,
): { segment: number; offset: number; length: number }[] {
  const out: { segment: number; offset: number; length: number }[] = [];
  let at = start;
  const end = start + length;
  while (at < end) {
    const segment = Math.floor(at / segmentBytes);
    const offset = at - segment * segmentBytes;
    const n = Math.min(end - at, segmentBytes - offset);
    out.push({ segment, offset, length: n });
    at += n;
  }
  return out;
}

/**
 * Whether the shim `pid` that started at `startTime` (clock ticks since boot) still runs: reads
 * /proc/<pid>/stat in the sandbox (field 22 is the start time; the comm field may hold spaces and
 * parentheses, so fields count from the last `)`).
 */
export async function shimAlive(
  sandbox: Sandbox,
  pid: number,
  startTime: number,
  signal?: AbortSignal,
): Promise<boolean> {
  let text: string;
  try {
    // A line read: /proc files report size 0, so a byte range read stops before their content.
    const r = await sandbox.readFile(
      `/proc/${pid}/stat`,
      { kind: "lines", startLine: 1, maxLines: 1, maxBytes: 4096 },
      omitUndefined({ signal }),
    );
    text = r.data.toString("utf8");
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
  return procStartTime(text) === startTime && procState(text) !== "Z";
}

/** Field 22 of a /proc/<pid>/stat line, or undefined when malformed. */
export function procStartTime(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the comm: field 3 (state) is fields[0], so field 22 is fields[19].
  const v = Number(fields[19]);
  return Number.isSafeInteger(v) ? v : undefined;
}

function procState(stat: string): string | undefined {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
}
