/**
 * Taking over a running sandbox Pod after the controller restarted (the Kubernetes side of
 * ../adopt.ts): `warden-helper --reset`, run through the Kubernetes exec API (core/v1
 * `pods/exec`), makes the helper (PID 1) SIGKILL every other process, the dead controller's
 * commands included, and start a fresh child on the same stdio; the asking process dies by
 * SIGKILL (exit 137), which says it happened. Then the controller attaches and pings
 * (start-pod.ts's connectHelper). Also the one-shot exec used for it: argv in, status and output
 * out (also the bench's baseline for a call through the exec API instead of the channel).
 */
import { Writable } from "node:stream";
import type { V1Status } from "@kubernetes/client-node";
import { SandboxError } from "../../errors.js";
import type { ChannelClient } from "../channel/protocol/client.js";
import { HELPER_PATH } from "../channel/protocol/helper-path.js";
import type { KubernetesCluster } from "./cluster.js";
import { SANDBOX_CONTAINER } from "./pod-spec.js";
import { connectHelper } from "./start-pod.js";

/** Outcome of podExec: the exit status (from the API's final Status) and the whole output. */
export interface PodExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The exit status a pods/exec Status reports: 0 for Success, the `ExitCode` cause for a non-zero
 * exit, -1 when it names none (the exec itself failed).
 */
export function exitCodeOf(status: V1Status): number {
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : -1;
}

/**
 * Runs `argv` in Pod `name`'s sandbox container through the exec API (no stdin, no TTY) and
 * resolves once it ends. Output is collected whole: for short commands only. Rejects SandboxError
 * when the API refuses the exec or the stream fails before a status arrived.
 */
export function podExec(cluster: KubernetesCluster, name: string, argv: string[]): Promise<PodExecResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const collect = (into: Buffer[]) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        into.push(chunk);
        done();
      },
    });
  return new Promise((resolve, reject) => {
    let status: V1Status | undefined;
    cluster.exec
      .exec(
        cluster.namespace,
        name,
        SANDBOX_CONTAINER,
        argv,
        collect(out),
        collect(err),
        null,
        false,
        (s) => {
          status = s;
        },
      )
      .then(
        (socket) => {
          socket.on("close", () => {
            if (!status) {
              reject(new SandboxError(`exec in Pod ${cluster.namespace}/${name} ended without a status.`));
              return;
            }
            resolve({
              exitCode: exitCodeOf(status),
              stdout: Buffer.concat(out).toString("utf8"),
              stderr: Buffer.concat(err).toString("utf8"),
            });
          });
        },
        (e: unknown) =>
          reject(
            new SandboxError(
              `exec in Pod ${cluster.namespace}/${name} failed: ${(e as Error).message ?? String(e)}`,
              { cause: e },
            ),
          ),
      );
  });
}

/** Exit status of a process killed by SIGKILL. */
const KILLED_STATUS = 137;

/**
 * Stops what the dead controller left running in Pod `name` and re-attaches its channel. Rejects
 * SandboxError when the reset does not end the way it should (helper too old, Pod gone) or the
 * helper does not answer afterwards; the caller then drops the session.
 */
export async function adoptPod(
  cluster: KubernetesCluster,
  name: string,
  options: { log?: (line: string) => void } = {},
): Promise<ChannelClient> {
  const reset = await podExec(cluster, name, [HELPER_PATH, "--reset"]);
  if (reset.exitCode !== KILLED_STATUS) {
    throw new SandboxError(
      `warden-helper --reset in Pod ${cluster.namespace}/${name} ended with exit ${reset.exitCode} instead of being killed: ${reset.stderr.trim()}`,
    );
  }
  return connectHelper(cluster, name, options);
}
