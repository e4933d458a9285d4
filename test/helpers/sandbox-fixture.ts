/**
 * Shared fixture of the sandbox engine tests: a unique `test-sandbox-…` tenant per file, output
 * collection, and a check that nothing labelled with that tenant is left behind.
 */
import { randomBytes } from "node:crypto";
import { getDocker } from "../../src/sandbox/docker/engine.js";
import { LABEL } from "../../src/sandbox/labels.js";
import type { ExecCommand, ExecOptions, ExecResult, Sandbox } from "../../src/sandbox/types.js";

/** Both exec paths: every sandbox suite runs against each (createSandbox's `execPath`). */
export const EXEC_PATHS = ["channel", "docker-exec"] as const;

/** A tenant label unique to one test file: `test-sandbox-<name>-<hex>`. */
export function testTenant(name: string): string {
  return `test-sandbox-${name}-${randomBytes(3).toString("hex")}`;
}

/** Runs `command` through `exec` (any exec path) and collects its output as strings. */
export async function collectExec(
  exec: (command: ExecCommand, options: ExecOptions) => Promise<ExecResult>,
  command: ExecCommand | string,
  options: ExecOptions = {},
): Promise<ExecResult & { stdout: string; stderr: string }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const result = await exec(typeof command === "string" ? { shell: command } : command, {
    ...options,
    onStdout: (c) => out.push(Buffer.from(c)),
    onStderr: (c) => err.push(Buffer.from(c)),
  });
  return {
    ...result,
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(err).toString("utf8"),
  };
}

/** Runs a command in a sandbox and collects its output as strings. */
export function run(
  sandbox: Sandbox,
  command: ExecCommand | string,
  options: ExecOptions = {},
): Promise<ExecResult & { stdout: string; stderr: string }> {
  return collectExec((cmd, opts) => sandbox.exec(cmd, opts), command, options);
}

/** Containers and volumes still carrying `tenant`'s label (`container ID` / `volume NAME`, sorted). */
export async function leftovers(tenant: string): Promise<string[]> {
  const docker = getDocker();
  const filter = { label: [`${LABEL.tenant}=${tenant}`] };
  const containers = await docker.listContainers({ all: true, filters: filter });
  const { Volumes } = await docker.listVolumes({ filters: filter });
  // Sorted: the engine lists in no fixed order, and tests compare two listings.
  return [
    ...containers.map((c) => `container ${c.Id}`),
    ...(Volumes ?? []).map((v) => `volume ${v.Name}`),
  ].sort();
}
