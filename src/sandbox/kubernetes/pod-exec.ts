/**
 * The one-shot exec through the Kubernetes exec API (core/v1 `pods/exec`): argv in, status and
 * output out (the sealed helper's probe, start-pod.ts; the bench's baseline for a call through the
 * exec API instead of the channel).
 */
import { Writable } from "node:stream";
import type { V1Status } from "@kubernetes/client-node";
import { SandboxError } from "../../errors.js";
import type { KubernetesCluster } from "./cluster.js";
import { SANDBOX_CONTAINER } from "./pod-spec.js";
import { exitCodeOf } from "./transport.js";

/** Outcome of podExec: the exit status (from the API's final Status) and the whole output. */
export interface PodExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** podExec's command did not end within its `timeoutMs` (its stream was closed). */
export class PodExecTimeoutError extends SandboxError {}

/**
 * Runs `argv` in Pod `name`'s sandbox container through the exec API (no stdin, no TTY) and
 * resolves once it ends. Output is collected whole: for short commands only. Rejects SandboxError
 * when the API refuses the exec or the stream fails before a status arrived, and
 * PodExecTimeoutError (closing the stream) when `timeoutMs` passes first.
 */
export function podExec(
  cluster: KubernetesCluster,
  name: string,
  argv: string[],
  options: { timeoutMs?: number } = {},
): Promise<PodExecResult> {
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
    let timedOut = false;
    let close: (() => void) | undefined;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            close?.();
            reject(
              new PodExecTimeoutError(
                `exec of ${argv.join(" ")} in Pod ${cluster.namespace}/${name} did not end within ${options.timeoutMs} ms.`,
              ),
            );
          }, options.timeoutMs);
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
          close = () => socket.close();
          if (timedOut) socket.close();
          socket.on("close", () => {
            clearTimeout(timer);
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
        (e: unknown) => {
          clearTimeout(timer);
          reject(
            new SandboxError(
              `exec in Pod ${cluster.namespace}/${name} failed: ${(e as Error).message ?? String(e)}`,
              { cause: e },
            ),
          );
        },
      );
  });
}
