/**
 * `createSandbox`: validates options, checks the engine and image, creates the copy-mode volume
 * and the hardened container and starts it (prepare.ts: with warden-helper and its channel, or
 * docker exec), then copies the workspace in (`finishSandbox`, also the warm pool's hand-over).
 * Any failure or abort on the way removes whatever was created, so nothing is left running.
 */

import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import { fromDockerError } from "../../errors.js";
import { isAbortError, omitUndefined, throwIfAborted } from "../../util/index.js";
import { type ChannelClient, channelUntar } from "../channel/index.js";
import { resolveExecPath } from "../exec-path.js";
import { DEFAULT_IMAGE, type ResolvedSandboxOptions, resolveSandboxOptions } from "../options.js";
import type { Sandbox, SandboxInfo, SandboxOptions } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import { packDirectory, type WorkspaceHashes } from "../workspace-copy.js";
import type { ExcludePredicate } from "../workspace-exclude.js";
import { workspaceReadError } from "../workspace-size.js";
import { DockerSandbox, removeSandboxResources } from "./docker-sandbox.js";
import { withEgress, writePlaceholderFiles } from "./egress-hook.js";
import { getDocker, pingEngine, requireImage } from "./engine.js";
import { type PreparedSandbox, prepareSandbox } from "./prepare.js";

/**
 * Creates and starts a hardened sandbox. Rejects: InvalidArgumentError / NotFoundError for bad
 * options (naming the field), EngineUnreachableError, ImageMissingError (naming
 * `warden images build`), SandboxError for other engine failures, AbortError when `signal` fires.
 */
export async function createSandbox(
  options: SandboxOptions = {},
  docker: Docker = getDocker(),
): Promise<Sandbox> {
  const signal = options.signal;
  const opts = await resolveSandboxOptions(options, options.sessionId ?? randomUUID());
  const execPath = resolveExecPath(options.execPath);
  throwIfAborted(signal);
  await pingEngine(docker, signal);
  await requireImage(docker, opts.image, DEFAULT_IMAGE);
  throwIfAborted(signal);
  const prepared = await prepareSandbox(docker, opts, execPath, omitUndefined({ signal }));
  return finishSandbox(docker, prepared, opts, signal);
}

/**
 * The second half of creating a sandbox: copies the workspace in (copy mode), records the
 * baseline and wraps the prepared container as a DockerSandbox for the session `opts` names
 * (its sessionId and tenant; for a pooled container these can differ from its labels).
 * Removes the container and volume when it fails. Rejects like createSandbox.
 */
export async function finishSandbox(
  docker: Docker,
  prepared: PreparedSandbox,
  opts: ResolvedSandboxOptions,
  signal?: AbortSignal,
): Promise<DockerSandbox> {
  const { container } = prepared;
  try {
    throwIfAborted(signal);
    const baseline = await setUpWorkspace(
      container,
      opts.workspaceMode,
      opts.workspaceHostPath,
      prepared.uid,
      prepared.channel,
      opts.workspaceExclude,
    );
    throwIfAborted(signal);
    const info: SandboxInfo = {
      containerId: container.id,
      sessionId: opts.sessionId,
      tenant: opts.tenant,
      image: opts.image,
      runtime: opts.runtime,
      workspaceMode: opts.workspaceMode,
      roots: [WORKSPACE_DIR, ...opts.mounts.map((m) => m.containerPath)],
      createdAt: prepared.createdAt,
      expiresAt: prepared.expiresAt,
      execPath: prepared.execPath,
      ...(prepared.channel ? { channelTransport: prepared.channel.transportName } : {}),
      uid: prepared.uid,
      network: prepared.egress
        ? {
            mode: "allowlist",
            proxyUrl: prepared.egress.proxyUrl,
            gatewayContainerId: prepared.egress.containerId,
          }
        : { mode: "none" },
    };
    const sandbox = new DockerSandbox(
      info,
      docker,
      container,
      prepared.volumeName,
      baseline,
      prepared.channel,
    );
    if (!prepared.egress) return sandbox;
    const wrapped = withEgress(sandbox, prepared.egress);
    if (opts.network.mode === "allowlist") await writePlaceholderFiles(wrapped, opts.network.secrets ?? []);
    return wrapped;
  } catch (err) {
    prepared.channel?.close();
    await removeSandboxResources(docker, container.id, prepared.volumeName).catch(() => {});
    await prepared.egress?.close().catch(() => {});
    if (isAbortError(err)) throw err;
    throw fromDockerError(err, { what: "creating the sandbox", containerId: container.id });
  }
}

/** Workspaces up to this size (packed) are copied in over the channel; larger ones through the archive API. */
const CHANNEL_COPY_MAX_BYTES = 48 * 1024 * 1024;

/**
 * Copies the host directory in (copy mode) and returns the baseline hashes for changedPaths.
 * With a channel, a workspace that packs to at most 48 MiB is extracted by the helper (one frame,
 * no docker-untar process); otherwise, or if that fails, through `PUT /containers/{id}/archive`.
 */
async function setUpWorkspace(
  container: Docker.Container,
  mode: SandboxInfo["workspaceMode"],
  hostPath: string | undefined,
  uid: number,
  channel?: ChannelClient,
  exclude?: ExcludePredicate,
): Promise<WorkspaceHashes> {
  if (!hostPath) return new Map();
  const packed = packDirectory(hostPath, { uid, gid: uid, ...(exclude ? { exclude } : {}) });
  // A host read error is about the directory, not the engine (ENOENT must not read as "engine
  // unreachable"); it may surface first as the archive stream's error, so it is looked for there too.
  const done = packed.done.catch((err: Error) => {
    throw workspaceReadError(hostPath, err);
  });
  done.catch(() => {}); // awaited below on every path that gets there; never an unhandled rejection
  try {
    return await copyWorkspace(container, mode, packed, done, channel);
  } catch (err) {
    const readError = await Promise.race([
      done.then(
        () => undefined,
        (e: unknown) => e,
      ),
      sleep(100, undefined, { ref: false }),
    ]);
    throw readError ?? err;
  }
}

async function copyWorkspace(
  container: Docker.Container,
  mode: SandboxInfo["workspaceMode"],
  packed: ReturnType<typeof packDirectory>,
  done: Promise<void>,
  channel?: ChannelClient,
): Promise<WorkspaceHashes> {
  if (mode !== "copy") {
    // ro/rw: nothing to copy, but the baseline is the host directory as it is now.
    packed.stream.resume();
    await done;
    return packed.hashes;
  }
  let source: Readable = packed.stream;
  if (channel) {
    const head = await readUpTo(packed.stream, CHANNEL_COPY_MAX_BYTES);
    if (head.complete) {
      await done;
      const archive = Buffer.concat(head.chunks);
      const copied = await channelUntar(channel, WORKSPACE_DIR, archive).then(
        () => true,
        () => false,
      );
      if (copied) return packed.hashes;
      source = Readable.from([archive]);
    } else {
      source = Readable.from(concatStreams(head.chunks, packed.stream));
    }
  }
  await Promise.all([container.putArchive(source, { path: WORKSPACE_DIR }), done]);
  return packed.hashes;
}

/** Reads `stream` until it ends or `maxBytes` are buffered; `complete` tells which. */
async function readUpTo(
  stream: Readable,
  maxBytes: number,
): Promise<{ chunks: Buffer[]; complete: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      total += chunk.length;
      if (total > maxBytes) {
        stream.pause();
        cleanup();
        resolve({ chunks, complete: false });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ chunks, complete: true });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
  });
}

async function* concatStreams(head: Buffer[], rest: Readable): AsyncGenerator<Buffer> {
  yield* head;
  for await (const chunk of rest) yield chunk as Buffer;
}
