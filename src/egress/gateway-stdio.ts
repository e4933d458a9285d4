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

/** An attached gateway: `detach` refuses pending questions and closes the stream (idempotent). */
export interface GatewayStdio {
  relay: AskRelay;
  detach(): void;
}

/**
 * Attaches to `container` (running or not yet started) with stdin, and follows its output:
 * questions to the session's approver (`network.approve`, else refused), connection records to
 * `network.onConnection` within `network.auditLimit` (summaries of the others to
 * `network.onAuditDropped`), stderr lines to `onCacheLine`. Rejects with the engine's attach error.
 */
export async function attachGatewayStdio(
  docker: Docker,
  container: Docker.Container,
  input: {
    sessionId: string;
    network: Extract<NetworkOptions, { mode: "allowlist" }>;
    onCacheLine?: (line: string) => void;
    /**
     * Ask the gateway for the records no controller acknowledged (an adopted gateway: the
     * connections that ended while `warden serve` was down).
     */
    replay?: boolean;
  },
): Promise<GatewayStdio> {
  const { sessionId, network } = input;
  const logs = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as unknown as Duplex;
  const relay = new AskRelay({
    sessionId,
    rules: network.rules,
    ...(network.approve ? { approve: network.approve } : {}),
    timeoutMs: network.approvalTimeoutMs ?? DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS,
    write: (line) => {
      if (!logs.destroyed) logs.write(line);
    },
  });
  const audit = boundedAudit(sessionId, network);
  const secrets = new SecretRelay({
    sessionId,
    secrets: network.secrets ?? [],
    headerNames: secretHeaderNames(network.secrets ?? []),
    write: (line) => {
      if (!logs.destroyed) logs.write(line);
    },
    onSecretUse: (record) => audit.secret(record),
  });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(logs, stdout, stderr);
  logs.on("error", () => {});
  logs.on("close", () => {
    stdout.end();
    stderr.end();
  });
  // Each record is acknowledged once it is in the audit (the highest seq, once per turn of the event
  // loop): the gateway keeps the others for a controller that attaches later (`WARDEN-REPLAY`).
  let acked = 0;
  let highest = 0;
  const acknowledge = () => {
    if (highest > acked && !logs.destroyed) logs.write(`WARDEN-ACK ${highest}\n`);
    acked = highest;
  };
  createInterface({ input: stdout }).on("line", (line) => {
    if (relay.handle(line) || secrets.handle(line)) return;
    const parsed = parseConnectionRecord(line, sessionId, network.rules, relay.timeoutMs);
    if (!parsed) return;
    // A replayed record this controller already has (a REPLAY's race with an ACK) is skipped.
    if (parsed.seq > 0 && parsed.seq <= highest) return;
    audit.connection(parsed.audit);
    if (parsed.seq > highest) {
      if (highest === acked) setImmediate(acknowledge);
      highest = parsed.seq;
    }
  });
  if (input.replay) logs.write("WARDEN-REPLAY\n");
  createInterface({ input: stderr }).on("line", (line) => input.onCacheLine?.(line));
  return {
    relay,
    detach() {
      relay.close();
      secrets.close();
      logs.destroy();
      audit.flush();
    },
  };
}
