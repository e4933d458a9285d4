/**
 * The sandbox's side of network egress (src/egress/): every command of a sandbox with a gateway
 * gets the gateway's proxy variables (a convenience: the control is the network, see
 * src/egress/gateway.ts), and destroying the sandbox removes the gateway and the session network
 * after the container.
 */
import type { EgressGateway } from "../../egress/index.js";
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
