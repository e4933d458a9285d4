/**
 * Helpers for engine tests that run `warden serve` as a real child process: a bundle of the CLI
 * (rolldown, dependencies left external and resolved through a node_modules symlink), spawning it
 * with a config, waiting for its "listening on" line, and cleaning up a tenant's containers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Docker from "dockerode";
import { build } from "rolldown";

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

/** Spawns `node main.js serve --config <config> …args` and resolves once it listens (60 s max). */
export async function spawnServe(main: string, config: string, args: string[] = []): Promise<ServeChild> {
  const child = spawn(process.execPath, [main, "serve", "--config", config, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
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

/** Force-removes every container (and volume) of a test tenant. */
export async function removeTenant(tenant: string): Promise<void> {
  const docker = new Docker();
  for (const c of await tenantContainers(tenant)) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true, v: true })
      .catch(() => undefined);
    const volume = c.Labels["io.warden.volume"];
    if (volume)
      await docker
        .getVolume(volume)
        .remove()
        .catch(() => undefined);
  }
}
