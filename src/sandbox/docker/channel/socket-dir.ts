/**
 * The host side of the channel socket (socket.ts): where its directories live, who may use them,
 * and their removal. Each sandbox gets `<base>/<16 hex>`, owned by root with the sandbox's gid as
 * group, mode 0710, bind-mounted read-only at CHANNEL_SOCKET_DIR: the sandbox's processes may
 * reach the socket in it and nothing else; no other sandbox (another gid) may even enter it, and
 * nothing the sandbox's uid does on the host (a `rw` workspace's uid 1000 is a real host user)
 * can rename, replace or link anything in it that root later uses.
 *
 * The socket is used only where it can work and be trusted: a local Linux engine (a bind mount's
 * source is a path on the engine's host, and a unix socket cannot cross into Docker Desktop's VM)
 * and a controller running as root (chown to the sandbox's gid). A controller in a container
 * whose base is not bind-mounted at the same path on the engine's host finds out at the first
 * create: the engine refuses the random directory it cannot see (isMissingBindSource), and the
 * socket is turned off for the process (start-helper.ts). Everywhere else the channel stays on
 * the attach stream, which is as safe.
 */
import { randomBytes } from "node:crypto";
import { chmod, chown, lstat, mkdir, readdir, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import type Docker from "dockerode";
import { InvalidArgumentError, SandboxError } from "../../../errors.js";

/** Where the socket's directory is mounted in the container (images/sandbox/helper/socket.go). */
export const CHANNEL_SOCKET_DIR = "/run/warden-channel";

/** The default base directory: on the host's /run tmpfs, so nothing outlives a reboot. */
export const DEFAULT_CHANNEL_BASE = "/run/warden-channels";

/** A socket directory younger than this is never swept: its container may be being created. */
export const SOCKET_DIR_SWEEP_AGE_MS = 10 * 60_000;

/**
 * The base directory from $WARDEN_CHANNEL_DIR: an absolute path (normalised), `none` (undefined:
 * the socket is off), or, when unset, DEFAULT_CHANNEL_BASE. Throws InvalidArgumentError for
 * anything else, naming the variable.
 */
export function channelSocketBase(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.WARDEN_CHANNEL_DIR;
  if (value === undefined || value === "") return DEFAULT_CHANNEL_BASE;
  if (value === "none") return undefined;
  if (!isAbsolute(value))
    throw new InvalidArgumentError(
      `WARDEN_CHANNEL_DIR must be an absolute path or "none" (got ${JSON.stringify(value)}); unset it for ${DEFAULT_CHANNEL_BASE}.`,
    );
  return resolve(value);
}

/**
 * True when `docker` talks to an engine on this machine through a unix socket (docker-modem:
 * `socketPath`, a path or a function finding the default one; `host` for tcp and ssh).
 */
export function isLocalEngine(docker: Docker): boolean {
  const modem = docker.modem as { socketPath?: unknown; host?: unknown };
  return process.platform === "linux" && modem.socketPath !== undefined && !modem.host;
}

/** Why the socket is off for this process (set once a sandbox's create showed it cannot work). */
let disabledReason: string | undefined;

/** Turns the socket off for the rest of this process; `reason` is logged once. */
export function disableChannelSocket(reason: string, log: (message: string) => void): void {
  if (disabledReason !== undefined) return;
  disabledReason = reason;
  log(`channel stays on the attach stream from now on: ${reason}`);
}

/** Turns the socket back on and forgets disableChannelSocket (tests that need a fresh process's state). */
export function resetChannelSocketState(): void {
  disabledReason = undefined;
}

/**
 * The socket directory for a new sandbox whose processes run as gid `sandbox.gid` under OCI
 * runtime `sandbox.runtime`, or undefined when the channel stays on the attach stream:
 * $WARDEN_CHANNEL_DIR is `none`; the engine is not local; the runtime is gVisor's (runsc refuses
 * connect(2) to a host socket unless started with --host-uds); `hostGroup`: the gid is shared
 * with host users (a `rw` workspace's 1000), any of whom could enter the directory, crowd the
 * listener or race the helper; the controller is not root and
 * $WARDEN_CHANNEL_DIR is unset (these quietly: docs/server-api.md, "Channel socket (Docker)");
 * the socket was turned off for the process; the base is unsafe or the directory cannot be made
 * (this turns the socket off for the process, logged once).
 * Throws InvalidArgumentError for a bad $WARDEN_CHANNEL_DIR.
 */
export async function socketDirFor(
  docker: Docker,
  sandbox: { gid: number; runtime?: string; hostGroup?: boolean },
  log: (message: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const base = channelSocketBase(env);
  if (base === undefined || disabledReason !== undefined || !isLocalEngine(docker)) return undefined;
  if (sandbox.runtime === "runsc" || sandbox.hostGroup) return undefined;
  const chosen = env.WARDEN_CHANNEL_DIR !== undefined && env.WARDEN_CHANNEL_DIR !== "";
  if (!chosen && process.getuid?.() !== 0) return undefined;
  try {
    await ensureBase(base);
    return await createSocketDir(base, sandbox.gid);
  } catch (err) {
    // Not root, an unsafe base, a full /run: the same for every later sandbox, so said once.
    disableChannelSocket(`no socket directory under ${base} (${(err as Error).message})`, log);
    return undefined;
  }
}

/**
 * Makes `base` (mode 0711) when missing and checks it and every directory above it with
 * assertOnlyOursPath; the deepest existing directory is checked before anything is made, so no
 * directory is made through another user's link. Throws an Error naming what is wrong.
 */
export async function ensureBase(base: string): Promise<void> {
  let existing = resolve(base);
  while (!(await exists(existing))) existing = dirname(existing);
  await assertOnlyOursPath(existing);
  await mkdir(base, { recursive: true, mode: 0o711 });
  await assertOnlyOursPath(base);
}

/** True when `path` exists (a dangling link counts: lstat). */
function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Checks that nobody but root and this process's uid can change what `dir` resolves to or put
 * anything in it, so root's later chmod, rm and listen there cannot be redirected: every
 * component from `/` is a real directory (not a link) owned by root or this uid, and none may be
 * written by group or others, except an ancestor with the sticky bit (as /tmp: others cannot
 * rename what is not theirs). Throws SandboxError naming the first component that fails.
 */
export async function assertOnlyOursPath(dir: string): Promise<void> {
  const uid = process.getuid?.();
  const parts = resolve(dir).split(sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const path = sep + parts.slice(0, i).join(sep);
    const info = await lstat(path);
    if (info.isSymbolicLink() || !info.isDirectory()) throw new SandboxError(`${path} is not a directory`);
    if (info.uid !== 0 && info.uid !== uid)
      throw new SandboxError(`${path} is owned by uid ${info.uid}, not by root or this process (${uid})`);
    const sticky = (info.mode & 0o1000) !== 0 && i < parts.length;
    if ((info.mode & 0o022) !== 0 && !sticky)
      throw new SandboxError(`${path} is writable by others (mode ${(info.mode & 0o777).toString(8)})`);
  }
}

/**
 * Creates `<base>/<16 random hex>`, owned by this process's uid with group `gid`, mode 0710, and
 * returns its path. Removes it again and rethrows when chown or chmod fail (not root).
 */
export async function createSocketDir(base: string, gid: number): Promise<string> {
  const dir = join(base, randomBytes(8).toString("hex"));
  await mkdir(dir, { mode: 0o700 });
  try {
    await chown(dir, process.getuid?.() ?? 0, gid);
    await chmod(dir, 0o710);
  } catch (err) {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    throw err;
  }
  return dir;
}

/**
 * Removes a socket directory when nobody else can have redirected it (assertOnlyOursPath).
 * Resolves true when it was removed, false when it was gone or not safe to touch; never throws
 * (what is left, gc sweeps).
 */
export async function removeSocketDir(dir: string): Promise<boolean> {
  try {
    await assertOnlyOursPath(dir);
    await rm(dir, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}

/** A copy of a `createContainer` body that also bind-mounts `hostDir` read-only at CHANNEL_SOCKET_DIR. */
export function withSocketDir(
  config: Docker.ContainerCreateOptions,
  hostDir: string,
): Docker.ContainerCreateOptions {
  const mount = { Type: "bind" as const, Source: hostDir, Target: CHANNEL_SOCKET_DIR, ReadOnly: true };
  return {
    ...config,
    HostConfig: { ...config.HostConfig, Mounts: [...(config.HostConfig?.Mounts ?? []), mount] },
  };
}

/**
 * True for the engine's answer to a create whose bind source `source` does not exist on the
 * engine's host (Docker: 400 "invalid mount config for type \"bind\": bind source path does not
 * exist: <source>"); another mount's missing source (a workspace) is not.
 */
export function isMissingBindSource(err: unknown, source: string): boolean {
  return err instanceof Error && err.message.includes(`bind source path does not exist: ${source}`);
}

/** The socket directory of each container this process made or adopted, by container id. */
const socketDirs = new Map<string, string>();

/**
 * Remembers `dir` as container `containerId`'s socket directory, so that its removal finds it even
 * when the container is gone already (removed outside warden: nothing left to inspect).
 */
export function rememberSocketDir(containerId: string, dir: string): void {
  socketDirs.set(containerId, dir);
}

/** The directory rememberSocketDir recorded for `containerId`, forgotten as it is returned. */
export function takeRememberedSocketDir(containerId: string): string | undefined {
  const dir = socketDirs.get(containerId);
  socketDirs.delete(containerId);
  return dir;
}

/**
 * The socket directory a container was made with (its bind mount at CHANNEL_SOCKET_DIR), or
 * undefined when it has none or the source is not one createSocketDir made under `base` (only
 * those are ever removed).
 */
export function socketDirOf(
  inspect: { Mounts?: Array<{ Source?: string; Destination?: string }> },
  base: string | undefined = safeBase(),
): string | undefined {
  const source = inspect.Mounts?.find((m) => m.Destination === CHANNEL_SOCKET_DIR)?.Source;
  return base && source && isSocketDirPath(source, base) ? source : undefined;
}

/** True for `<base>/<16 hex>`, the shape of a directory createSocketDir made: only those are ever removed. */
function isSocketDirPath(path: string, base: string): boolean {
  return dirname(path) === base && /^[0-9a-f]{16}$/.test(basename(path));
}

/** channelSocketBase, or undefined when $WARDEN_CHANNEL_DIR is bad (nothing of ours can be there). */
function safeBase(): string | undefined {
  try {
    return channelSocketBase();
  } catch {
    return undefined;
  }
}

/**
 * Socket directories under `base` that no container uses (`inUse`: the sources of the existing
 * containers' mounts) and that are older than SOCKET_DIR_SWEEP_AGE_MS at `now`: what a controller
 * killed between creating one and removing its container left. Removes them unless `dryRun`;
 * returns their paths. Only directories of this process's uid under a base that passes
 * assertOnlyOursPath are considered; a missing base has none.
 */
export async function sweepSocketDirs(
  inUse: Set<string>,
  options: { now: Date; dryRun?: boolean; base?: string },
): Promise<string[]> {
  const base = options.base ?? safeBase();
  if (
    !base ||
    !(await assertOnlyOursPath(base).then(
      () => true,
      () => false,
    ))
  )
    return [];
  const names = await readdir(base).catch(() => [] as string[]);
  const swept: string[] = [];
  for (const name of names) {
    const dir = join(base, name);
    if (!isSocketDirPath(dir, base)) continue;
    if (inUse.has(dir)) continue;
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory() || info.uid !== process.getuid?.()) continue;
    if (options.now.getTime() - info.mtimeMs < SOCKET_DIR_SWEEP_AGE_MS) continue;
    if (options.dryRun || (await removeSocketDir(dir))) swept.push(dir);
  }
  return swept;
}
