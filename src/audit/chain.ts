/**
 * The hash chain of the server's audit log (pure: no I/O). Every record belongs to one or two
 * streams: its tenant's (`tenant:<id>`, or `server` for a record without a tenant) and, when it
 * names a session and is not an HTTP request line, that session's (`session:<id>`). In each stream it carries a link: its position
 * (`seq`, from 0) and the hash of the stream's record before it (`prev`; 64 zeros for seq 0). A
 * record's hash is the sha256 (hex) of its line's exact bytes as written, without the newline.
 * Editing, removing, reordering or inserting a record breaks a link; verify.ts finds the first.
 */
import { createHash } from "node:crypto";

/** `prev` of a stream's first record (seq 0). */
export const GENESIS_HASH = "0".repeat(64);

/** A record's place in one stream. */
export interface ChainLink {
  /** `tenant:<id>`, `session:<id>` or `server`. */
  stream: string;
  /** Position in the stream, from 0. */
  seq: number;
  /** sha256 hex of the stream's record at seq - 1 (GENESIS_HASH at seq 0). */
  prev: string;
}

/** Where a stream stands: the seq its next record gets and the hash that record links to. */
export interface StreamHead {
  next: number;
  hash: string;
}

/**
 * The streams a record with these fields belongs to, tenant stream first: `tenant:<tenant>` (or
 * `server` without a tenant), then `session:<session>` when it names a session, except for an
 * HTTP request line (`kind: "request"`): a session's stream holds what happened in the session
 * and ends with its end checkpoint, which the DELETE request that closed it comes after.
 */
export function streamsOf(fields: { kind?: unknown; tenant?: unknown; session?: unknown }): string[] {
  const streams = [typeof fields.tenant === "string" ? `tenant:${fields.tenant}` : "server"];
  if (typeof fields.session === "string" && fields.kind !== "request")
    streams.push(`session:${fields.session}`);
  return streams;
}

/** sha256 (hex) of a line's bytes (a string as UTF-8; without its newline). */
export function lineHash(line: string | Uint8Array): string {
  return createHash("sha256").update(line).digest("hex");
}

/**
 * The line of one record: `level` (30) and `time` (ISO-8601) first, as the pino writer before it
 * wrote them, then the record's fields in their order, then `chain` (its links). No newline.
 */
export function formatAuditLine(time: string, fields: Record<string, unknown>, links: ChainLink[]): string {
  return JSON.stringify({ level: 30, time, ...fields, chain: links });
}

/**
 * The heads of every stream, advanced record by record. `links(streams)` gives a new record's
 * links (without advancing); `advance(links, hash)` moves each of its streams past it.
 */
export class ChainState {
  private readonly heads = new Map<string, StreamHead>();

  /** The head of `stream` (seq 0 and GENESIS_HASH for a stream without records). */
  head(stream: string): StreamHead {
    return this.heads.get(stream) ?? { next: 0, hash: GENESIS_HASH };
  }

  /** The links a new record in `streams` gets. */
  links(streams: readonly string[]): ChainLink[] {
    return streams.map((stream) => {
      const { next, hash } = this.head(stream);
      return { stream, seq: next, prev: hash };
    });
  }

  /** Moves each stream of `links` past the record whose line hashes to `hash`. */
  advance(links: readonly ChainLink[], hash: string): void {
    for (const l of links) this.heads.set(l.stream, { next: l.seq + 1, hash });
  }

  /** Forgets a stream that gets no more records (a closed session), so memory stays bounded. */
  forget(stream: string): void {
    this.heads.delete(stream);
  }
}

/** The `chain` field of a parsed line when it is a list of well-formed links; else undefined. */
export function linksOf(record: Record<string, unknown>): ChainLink[] | undefined {
  const chain = record.chain;
  if (!Array.isArray(chain) || chain.length === 0) return undefined;
  const links: ChainLink[] = [];
  for (const l of chain as unknown[]) {
    const { stream, seq, prev } = (l ?? {}) as Partial<ChainLink>;
    if (typeof stream !== "string" || !Number.isSafeInteger(seq) || (seq as number) < 0) return undefined;
    if (typeof prev !== "string" || !/^[0-9a-f]{64}$/.test(prev)) return undefined;
    links.push({ stream, seq: seq as number, prev });
  }
  return links;
}
