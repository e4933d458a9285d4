/**
 * The writing side of the audit chain (pure: the caller writes the lines): turns records into
 * chained lines, and after every `checkpointEvery` records of a stream, and at a session's end,
 * adds a checkpoint record signed with `signingKey` (checkpoint.ts). `resume` replays an existing
 * file's lines so the chain continues from each stream's last record.
 */
import type { KeyObject } from "node:crypto";
import { ChainState, formatAuditLine, lineHash, linksOf, streamsOf } from "./chain.js";
import { auditKeyId, signCheckpoint } from "./checkpoint.js";

/**
 * Ended session streams whose heads are kept, so a line that comes after a session's end (a late
 * egress record) continues its chain; past this many, the oldest is forgotten (memory stays bounded).
 */
const KEPT_ENDED_STREAMS = 4096;

/** The tenant and session fields that put a record in a stream (what its checkpoint carries). */
type Owner = { tenant?: string; session?: string };

/** Options of AuditChainWriter. */
export interface AuditChainWriterOptions {
  /** The ed25519 private key that signs checkpoints. */
  signingKey: KeyObject;
  /** Records of a stream between two checkpoints (at least 1). */
  checkpointEvery: number;
  /** Called with each line (no newline), in order; it must be written before the next one. */
  emit: (line: string) => void;
  /**
   * Fields of the record that announces the signing key (`kind: "audit-key"`), written once, right
   * before this writer's first checkpoint (so verify knows the key before it needs it).
   */
  keyRecord?: Record<string, unknown>;
  /** ISO-8601 time of a new line; default now. */
  now?: () => string;
}

/** Chains and signs records (see the file comment). */
export class AuditChainWriter {
  /** Id of the signing key (auditKeyId). */
  readonly keyId: string;
  private readonly state = new ChainState();
  /** Records of each stream since its last checkpoint. */
  private readonly counts = new Map<string, number>();
  private readonly owners = new Map<string, Owner>();
  /** Session streams whose `closed` record was read by resume and whose checkpoint was not yet. */
  private readonly closed = new Set<string>();
  private announced = false;
  /** Ended session streams, oldest first (KEPT_ENDED_STREAMS). */
  private readonly ended: string[] = [];

  constructor(private readonly options: AuditChainWriterOptions) {
    this.keyId = auditKeyId(options.signingKey);
  }

  /**
   * Takes one line of the existing file (its exact bytes, no newline): lines that are not chained
   * records are skipped. Streams of sessions that ended (closed, then signed) are ended here too.
   */
  resume(line: Uint8Array): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(Buffer.from(line).toString("utf8")) as Record<string, unknown>;
    } catch {
      return;
    }
    const links = record && typeof record === "object" ? linksOf(record) : undefined;
    if (!links) return;
    this.advance(record, links, lineHash(line));
    if (record.kind === "session" && record.event === "closed")
      this.closed.add(`session:${String(record.session)}`);
    const stream = String(record.stream);
    if (record.kind !== "checkpoint") return;
    this.counts.set(stream, 0);
    if (this.closed.delete(stream)) this.end(stream);
  }

  /** Writes a record, then the checkpoints of its streams that are due. */
  write(fields: Record<string, unknown>): void {
    this.append(fields);
    for (const stream of streamsOf(fields)) {
      if ((this.counts.get(stream) ?? 0) >= this.options.checkpointEvery) this.checkpoint(stream);
    }
  }

  /** Signs the session's stream, then its tenant's; the session's stream is then ended (KEPT_ENDED_STREAMS). */
  endSession(tenant: string, session: string): void {
    const stream = `session:${session}`;
    this.owners.set(stream, { tenant, session });
    this.checkpoint(stream);
    this.owners.set(`tenant:${tenant}`, { tenant });
    this.checkpoint(`tenant:${tenant}`);
    this.end(stream);
  }

  /** Signs every stream with records after its last checkpoint: sessions', then tenants', then the server's. */
  checkpointAll(): void {
    // The key record first: it joins the server stream, which is then due and signed too.
    this.announce();
    const due = [...this.counts].filter(([, n]) => n > 0).map(([s]) => s);
    const rank = (s: string) => (s.startsWith("session:") ? 0 : s.startsWith("tenant:") ? 1 : 2);
    for (const stream of due.sort((a, b) => rank(a) - rank(b))) this.checkpoint(stream);
  }

  /** Writes the key record, once, before the first checkpoint it signs. */
  private announce(): void {
    if (this.options.keyRecord && !this.announced) {
      this.announced = true;
      this.append(this.options.keyRecord);
    }
  }

  private checkpoint(stream: string): void {
    this.announce();
    const owner = this.owners.get(stream) ?? {};
    const links = this.state.links(streamsOf(owner));
    const own = links.find((l) => l.stream === stream);
    if (!own) return;
    const sig = signCheckpoint(this.options.signingKey, stream, own.seq, own.prev);
    this.append({ kind: "checkpoint", stream, ...owner, keyId: this.keyId, sig }, links);
    this.counts.set(stream, 0);
  }

  private append(fields: Record<string, unknown>, links = this.state.links(streamsOf(fields))): void {
    const line = formatAuditLine(this.options.now?.() ?? new Date().toISOString(), fields, links);
    this.options.emit(line);
    this.advance(fields, links, lineHash(line));
  }

  private advance(
    fields: Record<string, unknown>,
    links: ReturnType<ChainState["links"]>,
    hash: string,
  ): void {
    this.state.advance(links, hash);
    for (const l of links) {
      this.counts.set(l.stream, (this.counts.get(l.stream) ?? 0) + 1);
      const tenant = typeof fields.tenant === "string" ? { tenant: fields.tenant } : {};
      const session = l.stream.startsWith("session:") ? { session: l.stream.slice("session:".length) } : {};
      this.owners.set(l.stream, { ...tenant, ...session });
    }
  }

  /** Marks a session stream ended; forgets the oldest ended one past KEPT_ENDED_STREAMS. */
  private end(stream: string): void {
    this.ended.push(stream);
    if (this.ended.length <= KEPT_ENDED_STREAMS) return;
    const old = this.ended.shift() as string;
    this.state.forget(old);
    this.counts.delete(old);
    this.owners.delete(old);
  }
}
