/**
 * The controller's line to a running gateway: its attached stdio (no host path, so any engine that
 * can attach works). The gateway's stdout carries its connection records (one ConnectionAudit each),
 * its `ask` questions, which an AskRelay answers on its stdin, and its secret questions, which a
 * SecretRelay answers there; stderr carries its start-up lines (session CA, ready) and errors.
 * Used when a gateway starts (gateway.ts) and when a restarted controller adopts it (adopt.ts), so
 * an adopted session keeps its audit lines and its `ask` answers.
 */
import { createInterface } from "node:readline";
import { type Duplex, PassThrough } from "node:stream";
import type Docker from "dockerode";
import { AskRelay, DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS } from "./ask-relay.js";
import { boundedAudit } from "./audit-limit.js";
import { parseConnectionRecord } from "./connection-records.js";
import { secretHeaderNames } from "./secret-decision.js";
import { SecretRelay } from "./secret-relay.js";
import type { NetworkOptions } from "./types.js";

/**
 * Whose gateway it is: the session its questions and records belong to, and that session's network
 * options (rules, approver, audit callbacks, secret values). A warm-pool spare's gateway starts with
 * a binding of no session (`spareBinding`) and is bound to its claimer's at hand-over.
 */
export interface GatewayBinding {
  sessionId: string;
  network: Extract<NetworkOptions, { mode: "allowlist" }>;
}

/** An attached gateway: `detach` refuses pending questions and closes the stream (idempotent). */
export interface GatewayStdio {
  /**
   * Answers questions and audits records for `binding` from now on. The previous binding's pending
   * questions are refused and its dropped-record summary flushed; its "allow for the session"
   * answers do not carry over (a new AskRelay).
   */
  bind(binding: GatewayBinding): void;
  /** True once the attach stream closed: the gateway exited or was removed, or `detach` ran. */
  readonly closed: boolean;
  detach(): void;
}

/**
 * The binding of a warm-pool spare's gateway (`spareSessionId`, its `pool-<uuid>`): the spare's
 * rules, and nobody to ask, nothing to audit to, no secret values. A spare's sandbox runs no
 * command, so nothing should arrive; whatever does is refused, and no claimer's callbacks or
 * secrets are held for hours by a spare.
 */
export function spareBinding(
  spareSessionId: string,
  network: Extract<NetworkOptions, { mode: "allowlist" }>,
): GatewayBinding {
  const { rules, approvalTimeoutMs } = network;
  return {
    sessionId: spareSessionId,
    network: { mode: "allowlist", rules, ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}) },
  };
}

/**
 * Attaches to `container` (running or not yet started) with stdin, and follows its output for
 * `binding` (see GatewayStdio.bind): questions to the session's approver (`network.approve`, else
 * refused), connection records to `network.onConnection` within `network.auditLimit` (summaries of
 * the others to `network.onAuditDropped`), stderr lines to `onCacheLine`. Rejects with the
 * engine's attach error.
 */
export async function attachGatewayStdio(
  docker: Docker,
  container: Docker.Container,
  input: {
    binding: GatewayBinding;
    onCacheLine?: (line: string) => void;
    /**
     * Ask the gateway for the records no controller acknowledged (an adopted gateway: the
     * connections that ended while `warden serve` was down).
     */
    replay?: boolean;
  },
): Promise<GatewayStdio> {
  const logs = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as unknown as Duplex;
  const write = (line: string) => {
    if (!logs.destroyed) logs.write(line);
  };
  let bound = bindingHandlers(input.binding, write);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(logs, stdout, stderr);
  let closed = false;
  logs.on("error", () => {});
  logs.on("close", () => {
    closed = true;
    stdout.end();
    stderr.end();
  });
  // Each record is acknowledged once it is in the audit (the highest seq, once per turn of the event
  // loop): the gateway keeps the others for a controller that attaches later (`WARDEN-REPLAY`).
  let acked = 0;
  let highest = 0;
  const acknowledge = () => {
    if (highest > acked) write(`WARDEN-ACK ${highest}\n`);
    acked = highest;
  };
  createInterface({ input: stdout }).on("line", (line) => {
    if (bound.relay.handle(line) || bound.secrets.handle(line)) return;
    const { sessionId, network } = bound.binding;
    const parsed = parseConnectionRecord(line, sessionId, network.rules, bound.relay.timeoutMs);
    if (!parsed) return;
    // A replayed record this controller already has (a REPLAY's race with an ACK) is skipped.
    if (parsed.seq > 0 && parsed.seq <= highest) return;
    bound.audit.connection(parsed.audit);
    if (parsed.seq > highest) {
      if (highest === acked) setImmediate(acknowledge);
      highest = parsed.seq;
    }
  });
  if (input.replay) write("WARDEN-REPLAY\n");
  createInterface({ input: stderr }).on("line", (line) => input.onCacheLine?.(line));
  return {
    bind(binding) {
      bound.close();
      bound = bindingHandlers(binding, write);
    },
    get closed() {
      return closed || logs.destroyed;
    },
    detach() {
      bound.close();
      logs.destroy();
    },
  };
}

/** The relays and the bounded audit of one binding; `close` refuses its open questions and flushes. */
function bindingHandlers(binding: GatewayBinding, write: (line: string) => void) {
  const { sessionId, network } = binding;
  const relay = new AskRelay({
    sessionId,
    rules: network.rules,
    ...(network.approve ? { approve: network.approve } : {}),
    timeoutMs: network.approvalTimeoutMs ?? DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS,
    write,
  });
  const audit = boundedAudit(sessionId, network);
  const secrets = new SecretRelay({
    sessionId,
    secrets: network.secrets ?? [],
    headerNames: secretHeaderNames(network.secrets ?? []),
    write,
    onSecretUse: (record) => audit.secret(record),
  });
  return {
    binding,
    relay,
    secrets,
    audit,
    close() {
      relay.close();
      secrets.close();
      audit.flush();
    },
  };
}
