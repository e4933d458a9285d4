/**
 * A session: one sandbox, its spill files, its enabled tools and hooks, and the pipeline that runs
 * tool calls in it. The CLI (exec, replay, run) and the server (serve) all work through this.
 */
import type {
  AfterToolCallHook,
  BeforeToolCallHook,
  ProviderTool,
  RunToolCallsOptions,
  ToolSelection,
} from "../pipeline/index.js";
import type { Processes, ProcessLimits, ProcessRecord } from "../process/index.js";
import type { Sandbox, SandboxIdentity, SandboxSpec } from "../sandbox/index.js";
import type { ToolCall, ToolResultMessage } from "../tools/index.js";
import type { SpillBudget } from "./spill-budget.js";

/**
 * Options for createSession, composed: whose the session is (SandboxIdentity: sessionId, tenant,
 * controllerId), what its sandbox is made from (`sandbox`), the creation's signal, and the session's
 * own fields (tool selection, hooks, spill caps, env).
 */
export interface SessionOptions extends SandboxIdentity {
  /** What the session's sandbox is made from (image, workspace, mounts, limits…). Default `{}`: the hardened defaults. */
  sandbox?: SandboxSpec;
  /** Cancels the session's creation; anything created by then is removed before it rejects with AbortError. */
  signal?: AbortSignal;
  toolSelection?: ToolSelection;
  /** Run in order; the first block wins (fail closed: a throwing hook blocks the call). */
  beforeToolCall?: BeforeToolCallHook[];
  afterToolCall?: AfterToolCallHook[];
  /** Where spill files go on the host. Default: a private directory under os.tmpdir(). */
  spillDir?: string;
  /**
   * Cap on the bytes all the session's spill files hold together; past it a cut output's spill
   * file keeps only the output's first bytes and the result says so. Default 256 MiB; 0 keeps none.
   */
  spillMaxBytes?: number;
  /** How the caller raises spillMaxBytes, named in that notice (CLI: "--spill-max-bytes"). */
  spillMaxBytesHint?: string;
  /** A spill budget shared with other sessions (`warden serve`: the tenant's quotas.spillBytes). */
  spillShared?: SpillBudget;
  /**
   * Non-secret environment variables every command of the session sees (session-env.ts: names
   * validated, reserved ones refused); nothing is taken from the host's environment.
   */
  env?: Record<string, string>;
  /** Background processes (src/process): limits, and, for an adopted session, the records a server kept. */
  processes?: {
    limits?: Partial<ProcessLimits>;
    records?: readonly ProcessRecord[];
    /** Called after a start or a forgotten process changed the records (a server keeps them). */
    onRecordsChanged?: (records: ProcessRecord[]) => void | Promise<void>;
  };
}

export interface Session extends AsyncDisposable {
  readonly id: string;
  readonly sandbox: Sandbox;
  /**
   * The session's background processes; undefined when its sandbox has no channel (the docker-exec
   * path, the memory backend).
   */
  readonly processes: Processes | undefined;
  /** Names of the enabled tools, in registry order. */
  readonly enabledTools: string[];
  /** Function definitions for the enabled tools only. */
  providerTools(): ProviderTool[];
  /** Runs one batch (one assistant message's calls); results come back in call order. Never throws for a tool error. */
  runToolCalls(calls: ToolCall[], options?: RunToolCallsOptions): Promise<ToolResultMessage[]>;
  /** Destroys the sandbox and removes spill files. Idempotent. */
  close(): Promise<void>;
}
