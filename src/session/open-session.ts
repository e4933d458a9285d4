/**
 * A session assembled from its parts: a sandbox, a spill store, the tool registry and selection, the
 * hooks, and one file-mutation queue shared by every batch. `createSession` (create-session.ts) wires
 * the real parts; tests pass fakes through `SessionDependencies`.
 */
import { randomUUID } from "node:crypto";
import { InvalidArgumentError } from "../errors.js";
import type { ProviderTool } from "../pipeline/index.js";
import {
  buildProviderTools,
  createToolRegistry,
  FileMutationQueue,
  type PipelineContext,
  runToolCalls,
  selectEnabledTools,
} from "../pipeline/index.js";
import { openProcesses, type Processes, type ProcessesOptions } from "../process/index.js";
import type { CallOptions, Sandbox, SandboxIdentity, SandboxSpec } from "../sandbox/index.js";
import type { AnyTool, SpillStore } from "../tools/index.js";
import { SPILL_HANDLE_PREFIX } from "../tools/index.js";
import { omitUndefined } from "../util/index.js";
import { validateSessionEnv, withSessionEnv } from "./session-env.js";
import type { SpillStoreOptions } from "./spill-store.js";
import type { Session, SessionOptions } from "./types.js";

/**
 * The parts a session is built from; createSession's are the Docker backend's `create`,
 * createSpillStore and builtinTools.
 */
export interface SessionDependencies {
  /**
   * The session's sandbox: what it is made from, whose it is (always with the session's id), and
   * the call's options (the session's signal). A SandboxBackend's create, or its claim's sandbox.
   */
  createSandbox(spec: SandboxSpec, identity: SandboxIdentity, options: CallOptions): Promise<Sandbox>;
  createSpillStore(options: SpillStoreOptions): SpillStore | Promise<SpillStore>;
  builtinTools(): AnyTool[];
  /** Tools registered besides the built-ins (kept by `--no-builtin-tools`). */
  extraTools?: AnyTool[];
  /** Tools registered but enabled only when the selection's `tools` names them (the process tool). */
  optInTools?(): AnyTool[];
}

/** The sandbox's parts of SessionOptions (spec, identity under the session's id, call options). */
function sandboxPartsOf(
  options: SessionOptions,
  sessionId: string,
): [spec: SandboxSpec, identity: SandboxIdentity, call: CallOptions] {
  const { tenant, controllerId, signal } = options;
  const identity: SandboxIdentity = {
    sessionId,
    ...(tenant !== undefined ? { tenant } : {}),
    ...(controllerId !== undefined ? { controllerId } : {}),
  };
  return [options.sandbox ?? {}, identity, signal ? { signal } : {}];
}

/** The session's process options: its env under every start's, and what `options.processes` sets. */
function processOptionsOf(options: SessionOptions): ProcessesOptions {
  return omitUndefined({ ...options.processes, env: options.env });
}

/** The spill store's options: directory and caps. */
function spillOptionsOf(options: SessionOptions, sessionId: string): SpillStoreOptions {
  return omitUndefined({
    sessionId,
    dir: options.spillDir,
    maxBytes: options.spillMaxBytes,
    maxBytesHint: options.spillMaxBytesHint,
    shared: options.spillShared,
  });
}

/** `/spill/` names spill files to the model (tools/spill-handle.ts): no mount may sit there. */
function checkMounts(options: SessionOptions): void {
  for (const [i, mount] of (options.sandbox?.mounts ?? []).entries()) {
    if (`${mount.containerPath}/`.startsWith(SPILL_HANDLE_PREFIX)) {
      throw new InvalidArgumentError(
        `mounts[${i}].containerPath ${mount.containerPath} is under ${SPILL_HANDLE_PREFIX}, which names spill files; pick another path.`,
      );
    }
  }
}

/**
 * Opens a session with the given parts. The tool selection is checked before any container exists
 * (InvalidArgumentError for an unknown `--tools` name); if the spill store cannot be created the
 * sandbox is destroyed again. Rejects with the sandbox's errors (EngineUnreachableError, ImageMissingError…).
 */
export async function openSession(options: SessionOptions, deps: SessionDependencies): Promise<Session> {
  const sessionId = options.sessionId ?? randomUUID();
  const registry = createToolRegistry(deps.builtinTools(), deps.extraTools ?? [], deps.optInTools?.() ?? []);
  const enabled = selectEnabledTools(registry, options.toolSelection);
  checkMounts(options);
  const providerTools: ProviderTool[] = buildProviderTools(enabled);
  if (options.env) validateSessionEnv(options.env);

  const sandbox = await deps.createSandbox(...sandboxPartsOf(options, sessionId));
  let spill: SpillStore | undefined;
  let processes: Processes | undefined;
  try {
    spill = await deps.createSpillStore(spillOptionsOf(options, sessionId));
    // Background processes need the channel (Sandbox.processIO); without it the session has none.
    processes = sandbox.processIO ? await openProcesses(sandbox, processOptionsOf(options)) : undefined;
  } catch (err) {
    await Promise.allSettled([sandbox.destroy(), spill?.dispose()]);
    throw err;
  }
  const sessionSpill = spill;

  const ctx: PipelineContext = {
    tools: new Map(enabled.map((tool) => [tool.name, tool])),
    sandbox:
      options.env && Object.keys(options.env).length > 0 ? withSessionEnv(sandbox, options.env) : sandbox,
    spill: sessionSpill,
    ...(processes ? { processes } : {}),
    sessionId,
    beforeToolCall: options.beforeToolCall ?? [],
    afterToolCall: options.afterToolCall ?? [],
    mutationQueue: new FileMutationQueue(),
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const outcomes = await Promise.allSettled([sandbox.destroy(), sessionSpill.dispose()]);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
      if (failed) throw failed.reason;
    })();
    return closing;
  };

  return {
    id: sessionId,
    sandbox,
    processes,
    enabledTools: enabled.map((tool) => tool.name),
    providerTools: () => structuredClone(providerTools),
    runToolCalls: (calls, runOptions) => runToolCalls(calls, ctx, runOptions),
    close,
    [Symbol.asyncDispose]: close,
  };
}
