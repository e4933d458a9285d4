/**
 * The controller's line to a running gateway: its attached stdio (no host path, so any engine that
 * can attach works). The gateway's stdout carries access-log lines (one ConnectionAudit each) and
 * the relay's `ask` questions, which an AskRelay answers on its stdin, and its secret questions,
 * which a SecretRelay answers there; stderr is Squid's cache log.
 * Used when a gateway starts (gateway.ts) and when a restarted controller adopts it (adopt.ts), so
 * an adopted session keeps its audit lines and its `ask` answers.
 */
import { createInterface } from "node:readline";
import { type Duplex, PassThrough } from "node:stream";
import type Docker from "dockerode";
import { parseAccessLine } from "./access-log.js";
import { AskRelay, DEFAULT_NETWORK_APPROVAL_TIMEOUT_MS } from "./ask-relay.js";
import { boundedAudit } from "./audit-limit.js";
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
 * questions to the session's approver (`network.approve`, else refused), access-log lines to
 * `network.onConnection` within `network.auditLimit` (summaries of the others to
 * `network.onAuditDropped`), cache-log lines to `onCacheLine`. Rejects with the engine's attach error.
 */
export async function attachGatewayStdio(
  docker: Docker,
  container: Docker.Container,
  input: {
    sessionId: string;
    network: Extract<NetworkOptions, { mode: "allowlist" }>;
    onCacheLine?: (line: string) => void;
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
  createInterface({ input: stdout }).on("line", (line) => {
    if (relay.handle(line) || secrets.handle(line)) return;
    const record = parseAccessLine(line, sessionId, network.rules, relay.timeoutMs);
    if (record) audit.connection(record);
  });
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
