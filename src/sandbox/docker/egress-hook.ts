/**
 * The sandbox's side of network egress (src/egress/): every command of a sandbox with a gateway
 * gets the gateway's proxy variables (a convenience: the control is the network, see
 * src/egress/gateway.ts), and destroying the sandbox removes the gateway and the session network
 * after the container.
 */
import { type EgressGateway, placeholderOf, type SessionSecret } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import type { ExecCommand, ExecOptions, ExecResult } from "../types.js";
import type { DockerSandbox } from "./docker-sandbox.js";

/** Wraps `sandbox`'s exec and destroy for its egress gateway; returns the same object. */
export function withEgress(sandbox: DockerSandbox, egress: EgressGateway): DockerSandbox {
  const exec = sandbox.exec.bind(sandbox);
  const destroy = sandbox.destroy.bind(sandbox);
  let destroyed: Promise<void> | undefined;
  Object.assign(sandbox, {
    exec(command: ExecCommand, options?: ExecOptions): Promise<ExecResult> {
      return exec(command, { ...options, env: { ...egress.env, ...options?.env } });
    },
    destroy(): Promise<void> {
      destroyed ??= destroy().finally(() => egress.close());
      return destroyed;
    },
  });
  return sandbox;
}

/**
 * Writes each secret's placeholder file (`file`, an absolute path in the sandbox: exactly
 * `{{NAME}}`, no newline, mode 0644), the file form of the placeholders the sandbox gets instead
 * of values (docs/secrets.md). InvalidArgumentError naming the secret and path when it cannot be
 * written (the read-only root: choose a path under /tmp, HOME or /workspace).
 */
export async function writePlaceholderFiles(
  sandbox: DockerSandbox,
  secrets: readonly SessionSecret[],
): Promise<void> {
  for (const secret of secrets) {
    if (secret.file === undefined) continue;
    if (!secret.file.startsWith("/"))
      throw new InvalidArgumentError(
        `secret ${secret.name}: its file ${JSON.stringify(secret.file)} must be an absolute path in the sandbox.`,
      );
    await sandbox.writeFile(secret.file, Buffer.from(placeholderOf(secret.name))).catch((err: Error) => {
      throw new InvalidArgumentError(
        `secret ${secret.name}: its placeholder file ${secret.file} cannot be written (${err.message}); choose a path under /tmp, the home directory or /workspace.`,
      );
    });
  }
}
