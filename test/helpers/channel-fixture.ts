/**
 * Fixture of the channel engine tests: a hardened sandbox container whose main process is
 * warden-helper, labelled with a `test-channel-…` tenant, and its connected ChannelClient.
 */
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { type ChannelClient, channelExec } from "../../src/sandbox/channel/index.js";
import { connectChannel, withHelperMain } from "../../src/sandbox/docker/channel/index.js";
import { getDocker } from "../../src/sandbox/docker/engine.js";
import { hardenedContainerConfig } from "../../src/sandbox/docker/hardening.js";
import { sandboxLabels } from "../../src/sandbox/labels.js";
import { resolveLimits } from "../../src/sandbox/limits.js";
import type { ExecCommand, ExecOptions, ExecResult, SandboxLimits } from "../../src/sandbox/types.js";
import { collectExec } from "./sandbox-fixture.js";

/** A tenant unique to one test file: `test-channel-<name>-<hex>`. */
export function channelTenant(name: string): string {
  return `test-channel-${name}-${randomBytes(3).toString("hex")}`;
}

/**
 * The hardened container config createSandbox would use for `image` (read-only workspace, no
 * mounts), labelled with `tenant` and a one-hour expiry, as uid 1000 (createSandbox draws one per
 * sandbox; these fixtures need a known one); the helper is not wired in.
 */
export function testContainerConfig(
  image: string,
  tenant: string,
  limits: Partial<SandboxLimits> = {},
): Docker.ContainerCreateOptions {
  const now = new Date();
  return hardenedContainerConfig({
    image,
    limits: resolveLimits(limits),
    runtime: "runc",
    labels: sandboxLabels({
      sessionId: tenant,
      tenant,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
    }),
    workspaceMode: "ro",
    mounts: [],
    uid: 1000,
  });
}

/** A started helper container and its channel. `destroy` removes the container. */
export interface HelperBox {
  container: Docker.Container;
  client: ChannelClient;
  destroy(): Promise<void>;
}

/** Creates, starts and connects a helper container (hardened as createSandbox would). */
export async function startHelperBox(
  tenant: string,
  limits: Partial<SandboxLimits> = {},
): Promise<HelperBox> {
  const docker = getDocker();
  const config = withHelperMain(testContainerConfig("warden-sandbox:latest", tenant, limits));
  const container = await docker.createContainer(config);
  const destroy = async () => {
    await container.remove({ force: true, v: true }).catch(() => {});
  };
  try {
    const client = await connectChannel(container, { start: true });
    return {
      container,
      client,
      destroy: async () => {
        client.close();
        await destroy();
      },
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** Runs a command over the channel and collects its output as strings. */
export function runOn(
  client: ChannelClient,
  command: ExecCommand | string,
  options: ExecOptions = {},
): Promise<ExecResult & { stdout: string; stderr: string }> {
  return collectExec((cmd, opts) => channelExec(client, cmd, opts), command, options);
}
