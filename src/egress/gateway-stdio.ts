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
import { AuditLimiter, DEFAULT_AUDIT_LIMIT } from "./audit-limit.js";
import { secretHeaderNames } from "./secret-decision.js";
import { SecretRelay } from "./secret-relay.js";
import type { ConnectionAudit, NetworkOptions } from "./types.js";

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
  const secrets = new SecretRelay({
    sessionId,
    secrets: network.secrets ?? [],
    headerNames: secretHeaderNames(network.secrets ?? []),
    write: (line) => {
      if (!logs.destroyed) logs.write(line);
    },
    ...(network.onSecretUse ? { onSecretUse: network.onSecretUse } : {}),
  });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  docker.modem.demuxStream(logs, stdout, stderr);
  logs.on("error", () => {});
  logs.on("close", () => {
    stdout.end();
    stderr.end();
  });
  const audit = boundedAudit(sessionId, network);
  createInterface({ input: stdout }).on("line", (line) => {
    if (relay.handle(line) || secrets.handle(line)) return;
    const record = parseAccessLine(line, sessionId, network.rules, relay.timeoutMs);
    if (record) audit.write(record);
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

/** How long a window of dropped records lasts before its summary goes out (ms). */
const DROP_WINDOW_MS = 1000;

/**
 * The session's records through its AuditLimiter: those within `network.auditLimit` go to
 * `onConnection`; the others are counted, and their summary goes to `onAuditDropped` one window
 * after the first of them (and at `flush`, when the gateway is detached).
 */
function boundedAudit(
  sessionId: string,
  network: Extract<NetworkOptions, { mode: "allowlist" }>,
): { write(record: ConnectionAudit): void; flush(): void } {
  const limiter = new AuditLimiter(network.auditLimit ?? DEFAULT_AUDIT_LIMIT, sessionId, Date.now());
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const summary = limiter.takeSummary();
    if (summary) network.onAuditDropped?.(summary);
  };
  return {
    write(record) {
      if (limiter.admit(record, Date.now())) network.onConnection?.(record);
      else timer ??= setTimeout(flush, DROP_WINDOW_MS);
    },
    flush,
  };
}
