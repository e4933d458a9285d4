/**
 * Prometheus metrics (prom-client) on a registry of the server's own, so several servers in one
 * process (tests) do not collide. Names follow Prometheus conventions: `_total` counters, `_seconds`.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** The server's metrics. */
export interface ServerMetrics {
  registry: Registry;
  /** Live sessions per tenant. */
  sessions: Gauge<"tenant">;
  /** Finished tool calls by tenant, tool and outcome (ok | error). */
  toolCalls: Counter<"tenant" | "tool" | "outcome">;
  /** Policy decisions by tenant, decision and decider. */
  decisions: Counter<"tenant" | "decision" | "decider">;
  /** Connections through egress gateways by tenant and decision (allow | deny | ask→allow | ask→deny). */
  egressConnections: Counter<"tenant" | "decision">;
  /** Tool-call latency (start event to end event), seconds. */
  toolLatency: Histogram<"tool">;
  /** HTTP request latency, seconds. */
  httpLatency: Histogram<"method" | "route" | "status">;
  /** Requests refused for a full quota. */
  rateLimited: Counter<"tenant" | "quota">;
  /** Bytes of request bodies and file reads held in memory per tenant (buffered-bytes.ts). */
  bufferedBytes: Gauge<"tenant">;
  /** Sandboxes of new sessions by source: "pool" (a warm spare) or "cold" (created for the session). */
  sandboxStarts: Counter<"source">;
  /** Idle warm-pool sandboxes, read from the backend when /metrics is scraped. */
  poolIdle: Gauge;
  /** Warm pool keys whose spares found no room (no node takes their Pods) and which back off, read at scrape. */
  poolBackoffKeys: Gauge;
  /** Live sessions by exec path ("channel" | "docker-exec"), read from `execPathSource` when scraped. */
  sessionsByExecPath: Gauge<"exec_path">;
  /**
   * Kubernetes sessions' exec channels after their stream ended under the live session: re-opened
   * ("reopened") or a round of attempts that gave up ("failed"). src/sandbox/kubernetes/pod-channel.ts.
   */
  channelReconnects: Counter<"outcome">;
  /** Open HTTP connections the caps admitted (connections.ts). */
  connections: Gauge;
  /** Connections refused for a full cap, by the config field (maxConnections | maxConnectionsPerClient). */
  connectionsRefused: Counter<"cap">;
  /** What sessionsByExecPath reads (the server sets `current`). */
  execPathSource: { current?: () => Record<string, number> };
}

/** Creates the metrics; `defaults` adds prom-client's process metrics (off in tests). */
export function createServerMetrics(options: { defaults?: boolean } = {}): ServerMetrics {
  const registry = new Registry();
  if (options.defaults) collectDefaultMetrics({ register: registry, prefix: "warden_" });
  const registers = [registry];
  const execPathSource: ServerMetrics["execPathSource"] = {};
  return {
    registry,
    sessions: new Gauge({
      name: "warden_sessions",
      help: "Live sessions",
      labelNames: ["tenant"],
      registers,
    }),
    toolCalls: new Counter({
      name: "warden_tool_calls_total",
      help: "Finished tool calls",
      labelNames: ["tenant", "tool", "outcome"],
      registers,
    }),
    decisions: new Counter({
      name: "warden_policy_decisions_total",
      help: "Policy decisions",
      labelNames: ["tenant", "decision", "decider"],
      registers,
    }),
    egressConnections: new Counter({
      name: "warden_egress_connections_total",
      help: "Egress gateway decisions: one per connection, plus one per request inside an opened TLS tunnel",
      labelNames: ["tenant", "decision"],
      registers,
    }),
    toolLatency: new Histogram({
      name: "warden_tool_call_duration_seconds",
      help: "Tool call latency",
      labelNames: ["tool"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers,
    }),
    httpLatency: new Histogram({
      name: "warden_http_request_duration_seconds",
      help: "HTTP request latency",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    }),
    rateLimited: new Counter({
      name: "warden_rate_limited_total",
      help: "Requests refused for a full tenant quota (quota=server.maxBufferedBytes: the server's bound)",
      labelNames: ["tenant", "quota"],
      registers,
    }),
    bufferedBytes: new Gauge({
      name: "warden_buffered_bytes",
      help: "Bytes of request bodies and file reads held in memory (quotas.maxBufferedBytes)",
      labelNames: ["tenant"],
      registers,
    }),
    sandboxStarts: new Counter({
      name: "warden_sandbox_starts_total",
      help: "Sandboxes of new sessions, from the warm pool or created cold",
      labelNames: ["source"],
      registers,
    }),
    poolIdle: new Gauge({
      name: "warden_pool_idle_sandboxes",
      help: "Idle pre-started sandboxes in the warm pool",
      registers,
    }),
    poolBackoffKeys: new Gauge({
      name: "warden_pool_backoff_keys",
      help: "Warm pool keys backing off because their spares found no room on a node",
      registers,
    }),
    sessionsByExecPath: new Gauge({
      name: "warden_sessions_by_exec_path",
      help: "Live sessions by the path their calls take: the helper's channel or docker exec",
      labelNames: ["exec_path"],
      registers,
      collect() {
        for (const [path, n] of Object.entries(execPathSource.current?.() ?? {}))
          this.set({ exec_path: path }, n);
      },
    }),
    channelReconnects: new Counter({
      name: "warden_channel_reconnects_total",
      help: "Exec channels of Kubernetes sessions re-opened (reopened) or not (failed) after their stream ended",
      labelNames: ["outcome"],
      registers,
    }),
    connections: new Gauge({
      name: "warden_connections",
      help: "Open HTTP connections to the server (maxConnections, maxConnectionsPerClient)",
      registers,
    }),
    connectionsRefused: new Counter({
      name: "warden_connections_refused_total",
      help: "HTTP connections answered 503 and closed for a full cap, by the config field",
      labelNames: ["cap"],
      registers,
    }),
    execPathSource,
  };
}
