/**
 * Verification of an audit log's lines (pure: no I/O): walks the records in file order and
 * reports the first one whose chain link or checkpoint does not hold, named by line number
 * (1-based), stream, seq and what happened to it; or, when all hold, each stream's record count
 * and how far a checkpoint signs it. Lines before the file's first chained line (a log begun by a
 * warden without the chain) are counted as `unchained`, not checked.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { type ChainLink, GENESIS_HASH, lineHash, linksOf, streamsOf } from "./chain.js";
import { auditKeyId, checkpointSignatureValid } from "./checkpoint.js";

/** What went wrong at a fault's record. */
type AuditFaultKind =
  | "unparsable"
  | "unchained"
  | "edited"
  | "removed"
  | "reordered"
  | "inserted"
  | "bad-signature"
  | "unknown-key"
  | "end-checkpoint-missing";

/** The first fault found: its line (1-based), stream and seq when it has them, and a sentence. */
interface AuditFault {
  kind: AuditFaultKind;
  line: number;
  stream?: string;
  seq?: number;
  message: string;
}

/** One stream of an intact log. Lines are 1-based. */
interface AuditStreamSummary {
  stream: string;
  records: number;
  /** The last checkpoint of the stream: its seq and line, and the key id that signed it. */
  signed?: { seq: number; line: number; keyId: string };
  /** Records after the last checkpoint (all of them without one): nothing signs them yet. */
  unsigned: number;
  /** Line of the stream's last record. */
  lastLine: number;
}

/** The outcome of verifyAuditLines: the first fault, or every stream's summary. */
export interface AuditVerifyReport {
  fault?: AuditFault;
  /** Chained records checked. */
  records: number;
  /** Lines before the first chained line, not checked. */
  unchained: number;
  checkpoints: number;
  /** Ids of the keys whose signatures were checked, in order of first use. */
  keyIds: string[];
  /** The key id given by the caller (publicKey), when one was. */
  trustedKeyId?: string;
  streams: AuditStreamSummary[];
}

interface Parsed {
  record: Record<string, unknown>;
  links: ChainLink[];
  hash: string;
}

interface StreamState {
  next: number;
  hash: string;
  lastLine: number;
  records: number;
  signed?: { seq: number; line: number; keyId: string };
  /** seq and line of the session's `closed` record, when seen. */
  closed?: { seq: number; line: number };
}

/** Options of verifyAuditLines. */
export interface AuditVerifyOptions {
  /**
   * The ed25519 public key checkpoints must be signed by. Without it, a checkpoint must be signed
   * by a key an `audit-key` record before it announces (which proves the file is consistent, not
   * whose key it is).
   */
  publicKey?: KeyObject;
}

const where = (line: number, stream: string, seq: number) => `line ${line} (${stream} seq ${seq})`;

/** Verifies `lines` (the file split on "\n", without the empty string after its last newline). */
export function verifyAuditLines(
  lines: readonly string[],
  options: AuditVerifyOptions = {},
): AuditVerifyReport {
  const trustedKeyId = options.publicKey ? auditKeyId(options.publicKey) : undefined;
  const report: AuditVerifyReport = {
    records: 0,
    unchained: 0,
    checkpoints: 0,
    keyIds: [],
    ...(trustedKeyId ? { trustedKeyId } : {}),
    streams: [],
  };
  const parsed = lines.map(parseLine);
  // Where each stream's seqs are (line numbers, 1-based), to tell a removal from a reordering and
  // which of two records with the same seq was inserted.
  const positions = new Map<string, Map<number, number[]>>();
  parsed.forEach((p, i) => {
    for (const l of p?.links ?? []) {
      const bySeq = positions.get(l.stream) ?? new Map<number, number[]>();
      positions.set(l.stream, bySeq);
      bySeq.set(l.seq, [...(bySeq.get(l.seq) ?? []), i + 1]);
    }
  });
  const streams = new Map<string, StreamState>();
  const keys = new Map<string, KeyObject>();
  const fail = (fault: AuditFault) => ({ ...report, fault });
  let chained = false;
  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const p = parsed[i];
    if (p === null || p === undefined) {
      if (!chained && p === undefined) {
        report.unchained++;
        continue;
      }
      return p === null
        ? fail({
            kind: "unparsable",
            line,
            message: `line ${line}: not a JSON object (edited, or not an audit log)`,
          })
        : fail({
            kind: "unchained",
            line,
            message: `line ${line}: no chain link (inserted, or written by a warden without the audit chain)`,
          });
    }
    chained = true;
    report.records++;
    const expected = streamsOf(p.record);
    const named = p.links.map((l) => l.stream);
    if (expected.join(" ") !== named.join(" ")) {
      return fail({
        kind: "edited",
        line,
        message: `line ${line}: edited: its chain names ${named.join(", ")} but its fields say ${expected.join(", ")}`,
      });
    }
    for (const link of p.links) {
      const state = streams.get(link.stream) ?? { next: 0, hash: GENESIS_HASH, lastLine: 0, records: 0 };
      const fault = checkLink(link, state, line, p, parsed, positions);
      if (fault) return fail(fault);
      streams.set(link.stream, {
        ...state,
        next: link.seq + 1,
        hash: p.hash,
        lastLine: line,
        records: state.records + 1,
      });
    }
    const kind = p.record.kind;
    if (kind === "audit-key") {
      const fault = readKey(p.record, line, keys);
      if (fault) return fail(fault);
    } else if (kind === "checkpoint") {
      const fault = checkCheckpoint(p, line, streams, keys, options.publicKey, trustedKeyId);
      if (fault) return fail(fault);
      report.checkpoints++;
      const keyId = String(p.record.keyId);
      if (!report.keyIds.includes(keyId)) report.keyIds.push(keyId);
    } else if (kind === "session" && p.record.event === "closed") {
      const link = p.links.find((l) => l.stream.startsWith("session:"));
      const state = link && streams.get(link.stream);
      if (link && state) state.closed = { seq: link.seq, line };
    }
  }
  for (const [stream, s] of streams) {
    if (s.closed && !(s.signed && s.signed.seq > s.closed.seq)) {
      return fail({
        kind: "end-checkpoint-missing",
        line: s.closed.line,
        stream,
        seq: s.closed.seq,
        message:
          `${where(s.closed.line, stream, s.closed.seq)}: the session closed here but no checkpoint signs its stream after it ` +
          "(its end checkpoint was removed, or the server stopped between the two writes)",
      });
    }
    const unsigned = s.signed ? s.next - 1 - s.signed.seq : s.next;
    report.streams.push({
      stream,
      records: s.records,
      ...(s.signed ? { signed: s.signed } : {}),
      unsigned,
      lastLine: s.lastLine,
    });
  }
  return report;
}

/** A chained record (parsed, its links, its hash); null: not a JSON object; undefined: no chain. */
function parseLine(text: string): Parsed | null | undefined {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof record !== "object" || record === null || Array.isArray(record)) return null;
  const links = linksOf(record as Record<string, unknown>);
  if (!links) return undefined;
  return { record: record as Record<string, unknown>, links, hash: lineHash(text) };
}

/** The fault of one link against its stream's state, if any. */
function checkLink(
  link: ChainLink,
  state: StreamState,
  line: number,
  p: Parsed,
  parsed: readonly (Parsed | null | undefined)[],
  positions: Map<string, Map<number, number[]>>,
): AuditFault | undefined {
  const { stream, seq } = link;
  const bySeq = positions.get(stream) ?? new Map<number, number[]>();
  if (seq === state.next) {
    if (link.prev === state.hash) return undefined;
    if (seq === 0) {
      return {
        kind: "edited",
        line,
        stream,
        seq,
        message: `${where(line, stream, seq)}: edited: a stream's first record links to the genesis hash (64 zeros), this one does not`,
      };
    }
    return {
      kind: "edited",
      line: state.lastLine,
      stream,
      seq: seq - 1,
      message: `${where(state.lastLine, stream, seq - 1)}: edited: its hash is not the prev of the stream's next record (line ${line}, seq ${seq})`,
    };
  }
  if (seq > state.next) {
    const later = bySeq.get(state.next)?.find((l) => l > line);
    if (later !== undefined) {
      return {
        kind: "reordered",
        line,
        stream,
        seq,
        message: `${where(line, stream, seq)}: reordered: it comes before seq ${state.next} (line ${later})`,
      };
    }
    const n = seq - state.next;
    const range = n === 1 ? `seq ${state.next}` : `seq ${state.next}–${seq - 1}`;
    return {
      kind: "removed",
      line,
      stream,
      seq,
      message: `${where(line, stream, seq)}: ${n} record(s) removed before it (${range})`,
    };
  }
  // seq below the head: a seq seen before. Of the two, the inserted one is the one the stream's
  // next seq does not link to.
  const first = bySeq.get(seq)?.[0] ?? line;
  const successors = (bySeq.get(seq + 1) ?? []).map((l) =>
    parsed[l - 1]?.links.find((k) => k.stream === stream),
  );
  // An exact copy of an earlier record (a replay) is the later one.
  const copy = parsed[first - 1]?.hash === p.hash;
  const inserted = !copy && successors.some((s) => s?.prev === p.hash) ? first : line;
  return {
    kind: "inserted",
    line: inserted,
    stream,
    seq,
    message: `${where(inserted, stream, seq)}: inserted: seq ${seq} appears twice (lines ${first} and ${line})`,
  };
}

/** Reads an `audit-key` record into `keys`; a fault when its keyId is not its key's. */
function readKey(
  record: Record<string, unknown>,
  line: number,
  keys: Map<string, KeyObject>,
): AuditFault | undefined {
  let key: KeyObject | undefined;
  try {
    key = createPublicKey(String(record.publicKey));
  } catch {
    key = undefined;
  }
  const id = key?.asymmetricKeyType === "ed25519" ? auditKeyId(key) : undefined;
  if (!key || id === undefined || id !== record.keyId) {
    return {
      kind: "edited",
      line,
      message: `line ${line}: edited: this audit-key record's keyId ${String(record.keyId)} is not the id of its public key (${id ?? "not an ed25519 key"})`,
    };
  }
  keys.set(id, key);
  return undefined;
}

/** Checks a checkpoint record's key and signature and marks its stream signed. */
function checkCheckpoint(
  p: Parsed,
  line: number,
  streams: Map<string, StreamState>,
  keys: Map<string, KeyObject>,
  trusted: KeyObject | undefined,
  trustedKeyId: string | undefined,
): AuditFault | undefined {
  const stream = String(p.record.stream);
  const link = p.links.find((l) => l.stream === stream);
  if (!link) {
    return {
      kind: "edited",
      line,
      message: `line ${line}: edited: this checkpoint signs ${stream}, a stream it is not a record of`,
    };
  }
  const keyId = String(p.record.keyId);
  const at = where(line, stream, link.seq);
  const key = trusted ? (keyId === trustedKeyId ? trusted : undefined) : keys.get(keyId);
  if (!key) {
    const why = trusted
      ? `not by the key given with --public-key (${trustedKeyId})`
      : "which no audit-key record before it announces";
    return {
      kind: "unknown-key",
      line,
      stream,
      seq: link.seq,
      message: `${at}: checkpoint signed by key ${keyId}, ${why}`,
    };
  }
  if (!checkpointSignatureValid(key, stream, link.seq, link.prev, String(p.record.sig))) {
    return {
      kind: "bad-signature",
      line,
      stream,
      seq: link.seq,
      message: `${at}: the checkpoint's signature does not match: a record of ${stream} before it was changed and the chain rewritten to hide it, or the checkpoint itself was edited`,
    };
  }
  const state = streams.get(stream);
  if (state) state.signed = { seq: link.seq, line, keyId };
  return undefined;
}
