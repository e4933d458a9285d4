/**
 * Helpers for engine tests that run `warden serve` as a real child process: a bundle of the CLI
 * (rolldown, dependencies left external and resolved through a node_modules symlink), spawning it
 * with a config, waiting for its "listening on" line, and cleaning up a tenant's containers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import Docker from "dockerode";
import { build } from "rolldown";
import { removeSandboxResources } from "../../src/sandbox/index.js";
import { loadKubernetesClient } from "../../src/sandbox/kubernetes/index.js";
import type { ServerConfig } from "../../src/server/config/index.js";
import { openServeBackend, serveSessions } from "../../src/server/run-serve.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { createPolicyHookFactory } from "../../src/server/sessions/policy-hooks.js";
import { hashKey } from "../../src/server/tenancy/auth.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** Bundles src/cli/main.ts into a temp dir; returns the path of main.js. */
export async function bundleCli(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "warden-cli-bundle-"));
  await build({
    input: join(ROOT, "src/cli/main.ts"),
    platform: "node",
    external: (id) => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("\0"),
    output: { dir, format: "esm" },
    logLevel: "silent",
  });
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return join(dir, "main.js");
}

/** A running `warden serve` child and everything it printed to stderr. */
export interface ServeChild {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Spawns `node main.js serve --config <config> …args` (with `env` added to this process's) and
 * resolves once it listens (60 s max).
 */
export async function spawnServe(
  main: string,
  config: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ServeChild> {
  const child = spawn(process.execPath, [main, "serve", "--config", config, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  let err = "";
  child.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`warden serve did not start:\n${err}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m?.[1]) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    };
    child.stderr!.on("data", check);
    exited.then((code) => reject(new Error(`warden serve exited (${code}):\n${err}`)));
  });
  return { child, url, stderr: () => err, exited };
}

/** Containers labelled with `tenant` (all states). */
export async function tenantContainers(tenant: string): Promise<Docker.ContainerInfo[]> {
  return new Docker().listContainers({ all: true, filters: { label: [`io.warden.tenant=${tenant}`] } });
}

/** Force-removes every container of a test tenant, with its volume and channel socket directory. */
export async function removeTenant(tenant: string): Promise<void> {
  const docker = new Docker();
  for (const c of await tenantContainers(tenant))
    await removeSandboxResources(docker, c.Id, c.Labels["io.warden.volume"]).catch(() => undefined);
}

/** Quotas for a test tenant: 256 MiB of memory and 64 MiB of workspace per session. */
export function testQuotas(maxSessions: number) {
  return {
    maxSessions,
    maxConcurrentToolCalls: 4,
    cpus: 1,
    memoryBytes: 268435456,
    workspaceBytes: 67108864,
  };
}

/** HTTP helpers of a served tenant whose bearer token is `key`. */
export function tenantClient(key: string) {
  const api = (s: ServeChild, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers },
    });
  /** One bash tool call (id "c") in session `id`. */
  const bash = (s: ServeChild, id: string, command: string) =>
    api(s, `/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    });
  /** The text of that call's result. */
  const bashText = async (s: ServeChild, id: string, command: string): Promise<string> => {
    const body = (await (await bash(s, id, command)).json()) as {
      results: { content: { text: string }[] }[];
    };
    return body.results[0]!.content[0]!.text;
  };
  return { api, bash, bashText };
}

/** Kills the servers still running, removes the tenant's containers, the test dir and the CLI bundle. */
export async function cleanUpServe(
  children: readonly ServeChild[],
  tenant: string,
  dir: string | undefined,
  main: string | undefined,
): Promise<void> {
  for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await removeTenant(tenant);
  if (dir) await rm(dir, { recursive: true, force: true });
  if (main) await rm(dirname(main), { recursive: true, force: true });
}

/**
 * Writes `dir/serve.json`: loopback on a free port, state in `dir/state`, one tenant `tenant`
 * with bearer token `key` and testQuotas(4), plus `server` and `tenantExtra` fields. Returns its path.
 */
export async function writeServeConfig(
  dir: string,
  tenant: string,
  key: string,
  extra: { server?: Record<string, unknown>; tenant?: Record<string, unknown> } = {},
): Promise<string> {
  const path = join(dir, "serve.json");
  const tenantConfig = { id: tenant, keys: [{ id: "k", sha256: hashKey(key) }], quotas: testQuotas(4) };
  await writeFile(
    path,
    JSON.stringify({
      port: 0,
      stateDir: "state",
      ...extra.server,
      tenants: [{ ...tenantConfig, ...extra.tenant }],
    }),
  );
  return path;
}

/**
 * Starts `warden serve` in this process on `config` with the real Docker backend and the config's
 * policy hooks; `shutdown` closes its sessions (onExit "close").
 */
export async function startTestServer(config: ServerConfig): Promise<RunningServer> {
  if (config.backend?.kind === "kubernetes") await loadKubernetesClient();
  const backend = await openServeBackend(config);
  return startServer({
    config,
    backend,
    sessions: serveSessions(config, backend),
    hooks: await createPolicyHookFactory(config),
    onExit: "close",
  });
}
