/**
 * In-memory fakes for the server's unit tests: a Session whose tools are tiny scripts (echo, sleep,
 * spam, fail) over the shared FakeSandbox with a fixed workspace, and a fake backend that tracks
 * "containers": the sessions' factory (SessionFactory) and, through `backend`, the SandboxBackend the
 * server lists, removes and sweeps them with. `serverParts(fake)` gives startServer both.
 */
import type { RunToolCallsOptions } from "../../src/pipeline/types.js";
import type { ManagedSandbox, SandboxBackend } from "../../src/sandbox/index.js";
import { CONFIG_DEFAULTS, type ServerConfig, type TenantConfig } from "../../src/server/config/index.js";
import type { SessionRecord } from "../../src/server/sessions/record-store.js";
import type { SessionFactory } from "../../src/server/sessions/session-factory.js";
import { hashKey } from "../../src/server/tenancy/auth.js";
import type { Session, SessionOptions } from "../../src/session/types.js";
import type { ToolCall, ToolResultMessage } from "../../src/tools/types.js";
import { FakeSandbox } from "./fake-sandbox.js";

function result(call: ToolCall, text: string, isError = false, details?: unknown): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text }],
    ...(details === undefined ? {} : { details }),
    isError,
    timestamp: 1,
  };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    // A signal aborted before the call started never fires its event again: answer at once.
    if (signal?.aborted) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve(true);
    });
  });

/** Runs one fake call; `sleep` honours the signal, `spam` emits `count` updates of `bytes` each. */
async function runOne(call: ToolCall, opts: RunToolCallsOptions, log: string[]): Promise<ToolResultMessage> {
  const args = (call.arguments ?? {}) as { text?: string; ms?: number; count?: number; bytes?: number };
  opts.onEvent?.({
    type: "tool_execution_start",
    toolCallId: call.id,
    toolName: call.name,
    args: call.arguments,
  });
  let r: ToolResultMessage;
  if (call.name === "echo") r = result(call, args.text ?? "", false, { exitCode: 0 });
  else if (call.name === "sleep") {
    const aborted = await sleep(args.ms ?? 1000, opts.signal);
    log.push(`${call.id}:${aborted ? "aborted" : "done"}`);
    r = aborted ? result(call, "Operation aborted", true) : result(call, "slept");
  } else if (call.name === "spam") {
    for (let i = 0; i < (args.count ?? 10); i++) {
      opts.onEvent?.({
        type: "tool_execution_update",
        toolCallId: call.id,
        toolName: call.name,
        partial: { content: [{ type: "text", text: `${i}:${"x".repeat(args.bytes ?? 10)}` }] },
      });
      if (i % 50 === 0) await new Promise((res) => setImmediate(res));
    }
    r = result(call, `spammed ${args.count ?? 10}`);
  } else r = result(call, `Tool ${call.name} not found`, true);
  opts.onEvent?.({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result: r });
  return r;
}

/** A fake session over a fake sandbox. `log` records how sleep calls ended. */
export function fakeSession(
  options: SessionOptions,
  containerId: string,
  log: string[],
): Session & { closed: boolean } {
  const sandbox = new FakeSandbox({
    info: {
      containerId,
      sessionId: options.sessionId ?? "s",
      tenant: options.tenant ?? "local",
      image: "warden-sandbox:latest",
    },
    files: { "a.txt": "new\n", "b.txt": "added\n" },
    changes: [
      { path: "a.txt", kind: "modified" },
      { path: "b.txt", kind: "added" },
    ],
  });
  const s = {
    id: options.sessionId ?? "s",
    sandbox,
    processes: undefined,
    enabledTools: ["echo", "sleep", "spam"],
    closed: false,
    providerTools: () => [
      {
        type: "function" as const,
        function: { name: "echo", description: "Echo text", parameters: { type: "object" } },
      },
    ],
    async runToolCalls(calls: ToolCall[], opts: RunToolCallsOptions = {}) {
      return Promise.all(calls.map((c) => runOne(c, opts, log)));
    },
    async close() {
      s.closed = true;
    },
    async [Symbol.asyncDispose]() {
      s.closed = true;
    },
  };
  return s;
}

/** A fake container: a ManagedSandbox under the id field name `containerId`. */
export interface ManagedContainer {
  containerId: string;
  sessionId: string;
  tenant: string;
  controller: string;
  running: boolean;
  namespace?: string;
}

/**
 * A backend keeping fake containers in a map: it opens fake sessions itself (SessionFactory), and
 * `backend` is its SandboxBackend face, whose list, remove, sweep and close call listContainers,
 * removeContainer, removeUnusedSocketDirs and close below at each call (a test may replace them).
 */
export class FakeBackend implements SessionFactory {
  readonly containers = new Map<string, ManagedContainer>();
  readonly created: SessionOptions[] = [];
  readonly sessions: (Session & { closed: boolean })[] = [];
  readonly log: string[] = [];
  /** How often close() (the warm pool's drain in the real backend) was called. */
  closes = 0;
  /** Socket directories the sweep removes (Docker's); absent: none. */
  removeUnusedSocketDirs?: () => Promise<string[]>;
  readonly backend: SandboxBackend = fakeSandboxBackend(this);
  private n = 0;

  async create(options: SessionOptions): Promise<Session> {
    this.created.push(options);
    const containerId = `fake-${++this.n}`;
    this.containers.set(containerId, {
      containerId,
      sessionId: options.sessionId ?? "s",
      tenant: options.tenant ?? "local",
      controller: "elsewhere:1",
      running: true,
    });
    const s = fakeSession(options, containerId, this.log);
    const close = s.close;
    s.close = async () => {
      this.containers.delete(containerId);
      await close();
    };
    this.sessions.push(s);
    return s;
  }

  async adopt(record: SessionRecord, options: SessionOptions): Promise<Session | null> {
    const c = this.containers.get(record.containerId);
    if (!c?.running) return null;
    return fakeSession(options, record.containerId, this.log);
  }

  async listContainers(tenants: readonly string[]): Promise<ManagedContainer[]> {
    return [...this.containers.values()].filter((c) => tenants.includes(c.tenant));
  }

  async removeContainer({ containerId }: ManagedContainer): Promise<void> {
    this.containers.delete(containerId);
  }

  async close(): Promise<void> {
    this.closes++;
  }
}

/** What fakeSandboxBackend calls (FakeBackend's methods, or a test's own). */
export interface FakeContainers {
  listContainers(tenants: readonly string[]): Promise<ManagedContainer[]>;
  removeContainer(container: ManagedContainer): Promise<void>;
  removeUnusedSocketDirs?: () => Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The SandboxBackend face of `fake` (default: no containers): list/remove/sweep/close call its
 * methods; create, claim and adopt of a sandbox reject (sessions come from the fake's SessionFactory).
 */
export function fakeSandboxBackend(
  fake: FakeContainers = {
    listContainers: async () => [],
    removeContainer: async () => {},
    close: async () => {},
  },
): SandboxBackend {
  const refuse = async (): Promise<never> => {
    throw new Error("the fake backend opens its sessions itself");
  };
  return {
    kind: "fake",
    capabilities: {
      workspaceModes: ["copy", "ro", "rw"],
      mounts: true,
      networkModes: ["none", "allowlist"],
      runtimes: ["runc", "runsc"],
      execPaths: ["channel", "docker-exec"],
      warmPool: false,
    },
    scopes: [],
    create: refuse,
    claim: refuse,
    adopt: refuse,
    list: async (tenants) =>
      (await fake.listContainers(tenants)).map(
        ({ containerId, ...rest }): ManagedSandbox => ({ id: containerId, ...rest }),
      ),
    remove: ({ id, ...rest }) => fake.removeContainer({ containerId: id, ...rest }),
    gc: async () => [],
    sweep: async () =>
      ((await fake.removeUnusedSocketDirs?.()) ?? []).map((dir) => ({
        kind: "socket-dir" as const,
        id: dir,
        sessionId: "",
        tenant: "",
        reason: "orphaned" as const,
      })),
    poolStats: () => ({ idle: 0, backingOff: 0 }),
    close: () => fake.close(),
  };
}

/** startServer's `backend` and `sessions` of one fake (default: a new FakeBackend). */
export function serverParts(fake: FakeBackend = new FakeBackend()): {
  backend: SandboxBackend;
  sessions: SessionFactory;
} {
  return { backend: fake.backend, sessions: fake };
}

/** Bearer tokens of the test tenants. */
export const TOKENS = { alpha: "alpha-secret-token", beta: "beta-secret-token" } as const;

/** A tenant named `id` with generous quotas. */
export function tenant(id: keyof typeof TOKENS, overrides: Partial<TenantConfig> = {}): TenantConfig {
  return {
    id,
    keys: [{ id: `${id}-key`, sha256: hashKey(TOKENS[id]) }],
    quotas: {
      maxSessions: 3,
      maxConcurrentToolCalls: 4,
      maxConcurrentWorkspaceReads: 2,
      cpus: 2,
      memoryBytes: 512 * 1024 * 1024,
      workspaceBytes: 1e9,
      tmpBytes: 64 * 1024 * 1024,
      pids: 256,
      spillSessionBytes: 256 * 1024 * 1024,
      spillBytes: 1024 * 1024 * 1024,
      maxBufferedBytes: 64 * 1024 * 1024,
      maxNetworkedSessions: 5,
    },
    idleTtlMs: 60_000,
    maxLifetimeMs: 3_600_000,
    policy: [],
    workspaceRoots: [],
    workspaceModes: ["copy", "ro"],
    images: ["warden-sandbox:latest"],
    ...overrides,
  };
}

/** A config with tenants alpha and beta and state in `stateDir`. */
export function testConfig(
  stateDir: string,
  tenants: TenantConfig[] = [tenant("alpha"), tenant("beta")],
): ServerConfig {
  return {
    host: "127.0.0.1",
    port: 0,
    stateDir,
    auditLog: `${stateDir}/audit.jsonl`,
    jsonBodyLimitBytes: 64 * 1024,
    tarBodyLimitBytes: 1024 * 1024,
    filesMaxBytes: 1024 * 1024,
    tarMaxEntries: 100,
    maxBufferedBytes: 256 * 1024 * 1024,
    httpRequestTimeoutMs: 120_000,
    maxConnections: CONFIG_DEFAULTS.maxConnections,
    maxConnectionsPerClient: CONFIG_DEFAULTS.maxConnectionsPerClient,
    shutdownGraceMs: 1000,
    reapIntervalMs: 60_000,
    approvalTimeoutMs: 300_000,
    warmPool: { size: 0, maxIdleMs: 60_000, maxKeys: 8, networked: 0 },
    contendedOutputBytesPerSecond: CONFIG_DEFAULTS.contendedOutputBytesPerSecond,
    networkAuditLimit: { ...CONFIG_DEFAULTS.networkAuditLimit },
    maxNetworkedSessions: CONFIG_DEFAULTS.maxNetworkedSessions,
    tenants,
  };
}

/** The Authorization header of a test tenant. */
export function auth(id: keyof typeof TOKENS): { authorization: string } {
  return { authorization: `Bearer ${TOKENS[id]}` };
}
