/**
 * The server's audit log: one JSON line per HTTP request, tool call, approval, egress connection,
 * secret use and session event, appended with synchronous writes (one write(2) per line, O_APPEND)
 * so a `kill -9` can lose at most the line being formatted, never leave half of one. At start, a
 * torn last line left by an older writer or a full disk is cut off, so every line in the file parses.
 *
 * Every line is a link of a hash chain (src/audit chain.ts): it carries the sha256 of the line
 * before it in its tenant's stream and in its session's stream, and every `checkpointEvery` records
 * of a stream, and at a session's end, an ed25519-signed checkpoint record follows
 * (src/audit checkpoint.ts). After a restart the chain continues from the file's last record of
 * each stream. `warden audit verify` checks it (docs/audit.md).
 */

import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { AuditChainWriter, assertEd25519, auditKeyId } from "../audit/index.js";
import type { AuditDropSummary, ConnectionAudit, SecretUseAudit } from "../egress/index.js";
import { InvalidArgumentError } from "../errors.js";
import type { CallVerdict, Decider } from "../pipeline/index.js";

/** One audit line about a tool call. Sizes in bytes, durations in ms. */
export interface ToolAuditEntry {
  kind: "tool";
  tenant: string;
  session: string;
  /** The server's id of the call's batch (the call's key with toolCallId; inflight-calls.ts). */
  batch: string;
  tool: string;
  toolCallId: string;
  /** The policy's final answer (after any approval); "run" when no policy applies. */
  decision: CallVerdict | "run";
  /** Id of the rule that decided, when a policy did. */
  rule?: string;
  /** Who decided; "none" when no policy applies. */
  decider: Decider | "none";
  isError: boolean;
  exitCode?: number;
  bytes: number;
  /** The call's own time in ms, from its start to its end, without the wait for an approval. */
  durationMs: number;
  /** How long the call waited for a person's answer to an ask, in ms (absent when none was asked). */
  approvalMs?: number;
}

/** One audit line about an HTTP request. */
interface RequestAuditEntry {
  kind: "request";
  tenant?: string;
  key?: string;
  session?: string;
  method: string;
  route: string;
  status: number;
  bytes: number;
  durationMs: number;
}

/** Any other lifecycle event (session created, closed, adopted, orphan removed). */
interface LifecycleAuditEntry {
  kind: "session";
  event: "created" | "closed" | "adopted" | "orphan-removed" | "record-dropped";
  tenant: string;
  session: string;
  reason?: string;
  containerId?: string;
}

/**
 * A tool call that was accepted but had not finished when the server died (kill -9, crash):
 * written at the next start by reconcile (inflight-calls.ts). `startedAt` is its batch's start.
 */
interface InterruptedCallAuditEntry {
  kind: "interrupted";
  tenant: string;
  session: string;
  /** The batch's server id (absent for a batch journalled by a server before batch ids). */
  batch?: string;
  tool: string;
  toolCallId: string;
  startedAt: string;
}

/**
 * One connection through a session's egress gateway (src/egress: domain, port, decision, rule,
 * bytes each way, duration).
 */
interface NetworkAuditEntry extends Omit<ConnectionAudit, "sessionId">, CallLink {
  kind: "network";
  tenant: string;
  session: string;
}

/**
 * The tool call a record is linked to: the one call that was running in the session when the
 * connection or request started (absent when none, or more than one, was).
 */
export interface CallLink {
  toolCallId?: string;
  /** The call's batch (its server id). */
  batch?: string;
}

/** One request that carried a secret's placeholder (src/egress SecretUseAudit): used or refused. */
interface SecretAuditEntry extends Omit<SecretUseAudit, "sessionId">, CallLink {
  kind: "secret";
  tenant: string;
  session: string;
}

/**
 * The answer to one `ask`: `answer` as given (`deny` when nobody answered in time or the call was
 * aborted), `waitMs` from the question to the answer, `who` the id of the API key that answered
 * (`unanswered` when nobody did). `tool` is the call's tool, or `network` for a connection.
 */
interface ApprovalAuditEntry extends CallLink {
  kind: "approval";
  tenant: string;
  session: string;
  tool: string;
  answer: string;
  waitMs: number;
  who: string;
  /** Set for a network connection under an `ask` rule. */
  network?: { host: string; port: number; rule: string };
}

/**
 * The egress records of one session not written in one window because they were over
 * `networkAuditLimit` (src/egress audit-limit.ts): how many, by decision, when, and why.
 */
interface NetworkDroppedAuditEntry extends Omit<AuditDropSummary, "sessionId"> {
  kind: "network-dropped";
  tenant: string;
  session: string;
}

export type AuditEntry =
  | ToolAuditEntry
  | InterruptedCallAuditEntry
  | RequestAuditEntry
  | LifecycleAuditEntry
  | NetworkAuditEntry
  | NetworkDroppedAuditEntry
  | SecretAuditEntry
  | ApprovalAuditEntry;

/**
 * The server's audit log: appends its request, tool, approval, session, interrupted-call, network
 * and secret lines (`AuditEntry`). Not the policy hook's decision line, which is `PolicyAuditLog`
 * (src/audit/). The file log (createFileAuditLog) chains and signs them; the memory log does not.
 */
export interface ServerAuditLog {
  write(entry: AuditEntry): void;
  /** Signs the session's stream, then its tenant's (after the session's `closed` line). */
  endSession?(tenant: string, session: string): void;
  /** Signs every stream with records after its last checkpoint (graceful shutdown). */
  checkpointAll?(): void;
}

/**
 * Truncates a file after its last newline when it ends inside a line (a torn line of any length:
 * the file is read backwards in 1 MiB chunks until a newline). Returns bytes removed.
 */
export function repairTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const chunk = Buffer.alloc(Math.min(size, 1 << 20));
    let end = size;
    let keep = 0;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      readSync(fd, chunk, 0, end - start, start);
      const lastNewline = chunk.subarray(0, end - start).lastIndexOf(0x0a);
      if (lastNewline >= 0) {
        keep = start + lastNewline + 1;
        break;
      }
      end = start;
    }
    if (keep === size) return 0;
    ftruncateSync(fd, keep);
    return size - keep;
  } finally {
    closeSync(fd);
  }
}

/** Records of one stream between two checkpoints, by default (config auditCheckpointEvery). */
const DEFAULT_CHECKPOINT_EVERY = 100;

/** Options of createFileAuditLog. */
export interface FileAuditLogOptions {
  /** The ed25519 private key that signs checkpoints (loadAuditSigningKey); default: one made now, never written. */
  signingKey?: KeyObject;
  /** Records of a stream between two checkpoints; default DEFAULT_CHECKPOINT_EVERY (100). */
  checkpointEvery?: number;
  /** Told the public half (PEM) and id of a key made at start; default: nobody (the log records it). */
  onGeneratedKey?: (publicKeyPem: string, keyId: string) => void;
}

/** The file audit log: its signing key's id and public half (PEM), and close (tests). */
export interface FileAuditLog extends Required<ServerAuditLog> {
  keyId: string;
  publicKeyPem: string;
  close(): void;
}

/**
 * The operator's checkpoint signing key: the PEM ed25519 private key file at `path` (config
 * `auditSigningKey`). InvalidArgumentError naming the field when it cannot be read, is not a PEM
 * private key, or is not ed25519.
 */
export function loadAuditSigningKey(path: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(path));
  } catch (err) {
    throw new InvalidArgumentError(
      `auditSigningKey ${path} is not a readable PEM private key (${(err as Error).message}); ` +
        "make one with `openssl genpkey -algorithm ed25519 -out audit-key.pem`.",
    );
  }
  assertEd25519(key, "private", `auditSigningKey ${path}`);
  return key;
}

/**
 * The chained audit log on `path` (created 0600, parent 0700), its torn tail repaired and each
 * stream's chain continued from the file's last record of it. Before its first checkpoint it
 * writes one `audit-key` record: the signing key's id, public half (PEM) and `source` (config or
 * generated).
 */
export function createFileAuditLog(path: string, options: FileAuditLogOptions = {}): FileAuditLog {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  repairTornTail(path);
  const fd = openSync(path, "a", 0o600);
  const signingKey = options.signingKey ?? generateKeyPairSync("ed25519").privateKey;
  const publicKeyPem = createPublicKey(signingKey).export({ type: "spki", format: "pem" }).toString();
  const keyId = auditKeyId(signingKey);
  const source = options.signingKey ? "config" : "generated";
  const chain = new AuditChainWriter({
    signingKey,
    checkpointEvery: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
    emit: (line) => writeAll(fd, Buffer.from(`${line}\n`, "utf8")),
    keyRecord: { kind: "audit-key", keyId, publicKey: publicKeyPem, source },
  });
  forEachLine(path, (line) => chain.resume(line));
  if (!options.signingKey) options.onGeneratedKey?.(publicKeyPem, keyId);
  return {
    keyId,
    publicKeyPem,
    write: (entry) => chain.write(entry as unknown as Record<string, unknown>),
    endSession: (tenant, session) => chain.endSession(tenant, session),
    checkpointAll: () => chain.checkpointAll(),
    close: () => closeSync(fd),
  };
}

/** Writes all of `bytes` at the file's end (O_APPEND: one write(2) unless the kernel writes less). */
function writeAll(fd: number, bytes: Buffer): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Calls `take` with each newline-ended line of the file at `path` (its bytes), read in 1 MiB chunks. */
function forEachLine(path: string, take: (line: Buffer) => void): void {
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(1 << 20);
    let rest = Buffer.alloc(0);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const buf = Buffer.concat([rest, chunk.subarray(0, n)]);
      let start = 0;
      for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
        take(buf.subarray(start, nl));
        start = nl + 1;
      }
      rest = Buffer.from(buf.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
}

/** An audit log that keeps entries in memory (tests). */
export function createMemoryAuditLog(): ServerAuditLog & { entries: AuditEntry[] } {
  const entries: AuditEntry[] = [];
  return { entries, write: (entry) => entries.push(entry) };
}
