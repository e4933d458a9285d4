/**
 * The memory SandboxBackend: sandboxes held in this process's memory (MemorySandbox), so unit tests
 * and the conformance suite get a real SandboxBackend with no engine. Copy-mode workspaces only (the
 * host directory is read once, at creation or hand-over), no mounts, no network, runtime runc, the
 * `channel` exec path; `exec` answers a fixed set of argv commands and runs no process
 * (memory-exec.ts). `claim` is every backend's pooledClaims (pool/) over in-memory spares; `adopt`
 * takes over a sandbox this backend instance still holds (what a restarted controller would find
 * on an engine); `gc` removes expired sandboxes and those whose controller process is gone.
 */
import { randomUUID } from "node:crypto";
import { SandboxNotRunningError } from "../../errors.js";
import { throwIfAborted } from "../../util/index.js";
import type {
  AdoptRequest,
  BackendCapabilities,
  BackendOptions,
  ClaimOptions,
  ManagedSandbox,
  PoolStats,
  SandboxBackend,
} from "../backend.js";
import { refuseBeyondCapabilities } from "../capabilities.js";
import type { GcOptions, GcRemoval } from "../gc-types.js";
import { controllerProcessAlive } from "../labels.js";
import { type ResolvedSandboxOptions, resolveSandboxOptions } from "../options.js";
import {
  type ClaimResult,
  type PoolBackend,
  type PooledClaims,
  type PoolRequest,
  pooledClaims,
  poolRequestKeys,
} from "../pool/index.js";
import type { CallOptions, Sandbox, SandboxIdentity, SandboxSpec } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import { MemorySandbox } from "./memory-sandbox.js";
import { copyWorkspaceIn } from "./memory-workspace.js";

/** A held sandbox and the controller it was created (or handed over) for. */
interface Held {
  sandbox: MemorySandbox;
  controller: string;
}

/** Opens a memory backend; `options.warmPool` keeps in-memory spares per pool key. */
export function memoryBackend(options: BackendOptions = {}): SandboxBackend {
  return new MemoryBackend(options);
}

class MemoryBackend implements SandboxBackend {
  readonly kind = "memory";
  readonly scopes: readonly string[] = [];
  readonly capabilities: BackendCapabilities;
  private readonly held = new Map<string, Held>();
  private readonly keys = poolRequestKeys("local");
  private readonly pool: PooledClaims;

  constructor(options: BackendOptions) {
    const pool = options.warmPool;
    this.capabilities = {
      workspaceModes: ["copy"],
      mounts: false,
      networkModes: ["none"],
      runtimes: ["runc"],
      execPaths: ["channel"],
      warmPool: (pool?.size ?? 0) > 0,
    };
    this.pool = pooledClaims(
      options,
      // Called only when a pool is configured, and then with its spares' lifetime.
      () => this.poolBackend(pool?.ttlMs ?? 0),
      (spec, identity, callOptions) => this.create(spec, identity, callOptions),
    );
  }

  async create(spec: SandboxSpec, identity: SandboxIdentity, options: CallOptions = {}): Promise<Sandbox> {
    refuseBeyondCapabilities(this.kind, this.capabilities, spec);
    throwIfAborted(options.signal);
    const opts = await resolveSandboxOptions({ ...spec, ...identity }, identity.sessionId ?? randomUUID());
    return this.started(opts, options.signal);
  }

  async claim(
    spec: SandboxSpec,
    identity: SandboxIdentity,
    options: ClaimOptions = {},
  ): Promise<ClaimResult> {
    refuseBeyondCapabilities(this.kind, this.capabilities, spec);
    return this.pool.claim(spec, identity, options);
  }

  async adopt(request: AdoptRequest, options: CallOptions = {}): Promise<Sandbox | null> {
    throwIfAborted(options.signal);
    const held = this.held.get(request.id);
    if (!held || held.sandbox.destroyed) return null;
    const { info } = held.sandbox;
    if (info.tenant !== request.tenant || info.sessionId !== request.sessionId) return null;
    return held.sandbox;
  }

  async list(tenants: readonly string[], options: CallOptions = {}): Promise<ManagedSandbox[]> {
    throwIfAborted(options.signal);
    return [...this.held.values()]
      .filter((h) => tenants.includes(h.sandbox.info.tenant))
      .map((h) => ({
        id: h.sandbox.info.containerId,
        sessionId: h.sandbox.info.sessionId,
        tenant: h.sandbox.info.tenant,
        controller: h.controller,
        running: true,
      }));
  }

  async remove(sandbox: ManagedSandbox, options: CallOptions = {}): Promise<void> {
    throwIfAborted(options.signal);
    await this.held.get(sandbox.id)?.sandbox.destroy();
  }

  async gc(options: GcOptions = {}): Promise<GcRemoval[]> {
    const now = options.now ?? new Date();
    const removals: GcRemoval[] = [];
    for (const { sandbox, controller } of [...this.held.values()]) {
      const { info } = sandbox;
      if (options.tenant !== undefined && info.tenant !== options.tenant) continue;
      const reason =
        info.expiresAt.getTime() <= now.getTime()
          ? "expired"
          : controllerProcessAlive(controller) === false
            ? "orphaned"
            : null;
      if (!reason) continue;
      removals.push({
        kind: "container",
        id: info.containerId,
        sessionId: info.sessionId,
        tenant: info.tenant,
        reason,
      });
      if (!options.dryRun) await sandbox.destroy();
    }
    return removals;
  }

  /** Nothing outlives a memory sandbox: no volumes, gateways nor socket directories. */
  async sweep(): Promise<GcRemoval[]> {
    return [];
  }

  poolStats(): PoolStats {
    return this.pool.poolStats();
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** A held sandbox made from `opts`, its workspace copied in; destroyed again when that fails. */
  private async started(opts: ResolvedSandboxOptions, signal?: AbortSignal): Promise<MemorySandbox> {
    const id = `memory-${randomUUID()}`;
    const createdAt = new Date();
    const sandbox = new MemorySandbox(
      {
        containerId: id,
        sessionId: opts.sessionId,
        tenant: opts.tenant,
        image: opts.image,
        runtime: opts.runtime,
        workspaceMode: opts.workspaceMode,
        roots: [WORKSPACE_DIR],
        createdAt,
        expiresAt: new Date(createdAt.getTime() + opts.ttlMs),
        execPath: "channel",
        network: { mode: "none" },
      },
      () => this.held.delete(id),
    );
    this.held.set(id, { sandbox, controller: opts.controllerId });
    try {
      await this.copyIn(sandbox, opts, signal);
    } catch (err) {
      await sandbox.destroy();
      throw err;
    }
    return sandbox;
  }

  private async copyIn(
    sandbox: MemorySandbox,
    opts: ResolvedSandboxOptions,
    signal?: AbortSignal,
  ): Promise<void> {
    if (opts.workspaceHostPath) await copyWorkspaceIn(sandbox, opts.workspaceHostPath, opts.workspaceExclude);
    throwIfAborted(signal);
  }

  /** The warm pool's view of this backend: spares are held sandboxes with an empty workspace. */
  private poolBackend(spareTtlMs: number): PoolBackend<PoolRequest, MemorySandbox> {
    return {
      keyOf: (request) => this.keys.keyOf(request),
      prepare: async (request, signal) => {
        const { opts } = await this.keys.spareOf(request, spareTtlMs);
        return this.started(opts, signal);
      },
      handOver: async (spare, request) => {
        const opts = await this.keys.claimOf(request, spare.info.expiresAt);
        const held = this.held.get(spare.info.containerId);
        if (!held || spare.destroyed) throw new SandboxNotRunningError(spare.info.containerId);
        try {
          await this.copyIn(spare, opts, request.claim?.signal);
        } catch (err) {
          await spare.destroy();
          throw err;
        }
        const now = Date.now();
        spare.info = { ...spare.info, sessionId: opts.sessionId, expiresAt: new Date(now + opts.ttlMs) };
        held.controller = opts.controllerId;
        return spare;
      },
      createCold: async (request) => {
        const claimer = this.keys.claimerOptions(request);
        const opts = await resolveSandboxOptions(claimer, claimer.sessionId ?? randomUUID());
        return this.started(opts, request.claim?.signal);
      },
      alive: (spare) => !spare.destroyed,
      discard: (spare) => spare.destroy(),
    };
  }
}
