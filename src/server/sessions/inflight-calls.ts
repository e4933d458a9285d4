/**
 * The journal of tool-call batches in flight: before a batch runs, one small JSON file under
 * `<stateDir>/inflight/` names its calls and the audit log's size at that moment; when the batch
 * is over the file is deleted. After a crash (`kill -9`), `recover` finds the files left behind
 * and writes one audit line `{kind: "interrupted"}` for each call of them that has
 * no line of its own in the audit log after that offset (neither its result line nor an earlier
 * recovery's `interrupted` line), so every accepted call ends up with exactly one final line:
 * a crash after a call's result line but before the file's deletion adds nothing, and a crash
 * during recovery does not repeat a line.
 *
 * The files are written without fsync: they survive a crash of the server process (the page
 * cache stays), not a crash of the host, which stops the sandboxes too. A file is created new
 * (O_EXCL) with one write, so a crash leaves it either whole or empty; an empty one is a batch
 * that had not started yet, and is dropped.
 *
 * Every batch pays for its file, so `begin` and its deletion use synchronous calls, as the audit
 * log's writes do: a stat, a small create and an unlink on the state directory take microseconds,
 * while their promise forms cost the event loop about 0.3 ms per batch in thread-pool round trips
 * (issue 11: every tenant's calls wait behind that).
 */
import { randomBytes } from "node:crypto";
import { statSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdir, open, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ServerAuditLog } from "../audit.js";

/**
 * One journalled batch. `auditOffset` is the audit file's size in bytes when it began (-1: no file).
 * `batch` is the server's id of the batch, which its calls' audit lines carry: tool-call ids are the
 * client's, unique within a batch only, so a concurrent batch of the session may reuse them (absent
 * in the files of a server before it: their calls are matched by session and id).
 */
export interface InflightBatch {
  version: 1;
  tenant: string;
  session: string;
  batch?: string;
  calls: { id: string; name: string }[];
  auditOffset: number;
  startedAt: string;
}

/** A call found interrupted by `recover`. */
export interface InterruptedCall {
  tenant: string;
  session: string;
  batch?: string;
  toolCallId: string;
  tool: string;
}

/** The in-flight journal of one state directory. */
export class InflightCalls {
  readonly dir: string;

  /** `auditPath`: the audit log file whose lines mark a call finished (config.auditLog). */
  constructor(
    stateDir: string,
    private readonly auditPath?: string,
  ) {
    this.dir = join(stateDir, "inflight");
  }

  /** Creates the directory (0700). */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  /**
   * Journals a batch about to run; resolves once the file is written, with the function that
   * deletes it when the batch is over.
   */
  async begin(
    batch: Pick<InflightBatch, "tenant" | "session" | "batch" | "calls">,
  ): Promise<() => Promise<void>> {
    const file = join(this.dir, `${Date.now()}-${randomBytes(6).toString("hex")}.json`);
    const entry: InflightBatch = {
      version: 1,
      ...batch,
      auditOffset: this.auditSize(),
      startedAt: new Date().toISOString(),
    };
    writeFileSync(file, JSON.stringify(entry), { flag: "wx", mode: 0o600 });
    return async () => {
      try {
        unlinkSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    };
  }

  /** Writes the `interrupted` lines of the batches a crash left (see above) and deletes their files. */
  async recover(audit: ServerAuditLog): Promise<InterruptedCall[]> {
    const interrupted: InterruptedCall[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      const file = join(this.dir, name);
      const batch = await readBatch(file);
      if (batch) {
        const finished = await this.finishedSince(batch, batch.auditOffset);
        for (const call of batch.calls) {
          if (finished.has(call.id)) continue;
          finished.add(call.id);
          const entry = {
            tenant: batch.tenant,
            session: batch.session,
            ...(batch.batch ? { batch: batch.batch } : {}),
            toolCallId: call.id,
            tool: call.name,
          };
          audit.write({ kind: "interrupted", ...entry, startedAt: batch.startedAt });
          interrupted.push(entry);
        }
      }
      await rm(file, { force: true });
    }
    return interrupted;
  }

  private auditSize(): number {
    if (!this.auditPath) return -1;
    try {
      return statSync(this.auditPath).size;
    } catch {
      return -1;
    }
  }

  /**
   * Call ids of `batch` with a final line (result or interrupted) in the audit log from byte
   * `offset`: lines of its batch id, or (a journal file without one) of its session.
   */
  private async finishedSince(batch: InflightBatch, offset: number): Promise<Set<string>> {
    const { session } = batch;
    const ids = new Set<string>();
    if (!this.auditPath || offset < 0) return ids;
    let text: string;
    try {
      const fh = await open(this.auditPath, "r");
      try {
        const size = (await fh.stat()).size;
        const buf = Buffer.alloc(Math.max(0, size - offset));
        await fh.read(buf, 0, buf.length, offset);
        text = buf.toString("utf8");
      } finally {
        await fh.close();
      }
    } catch {
      return ids;
    }
    for (const line of text.split("\n")) {
      if (!line.includes(session)) continue;
      try {
        const e = JSON.parse(line) as {
          kind?: string;
          session?: string;
          batch?: string;
          toolCallId?: string;
        };
        const final = e.kind === "tool" || e.kind === "interrupted";
        const ours = e.session === session && (batch.batch === undefined || e.batch === batch.batch);
        if (final && ours && e.toolCallId) ids.add(e.toolCallId);
      } catch {
        // a torn line: not a finished call
      }
    }
    return ids;
  }
}

async function readBatch(file: string): Promise<InflightBatch | null> {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as InflightBatch;
    return value.version === 1 && Array.isArray(value.calls) ? value : null;
  } catch {
    return null;
  }
}
