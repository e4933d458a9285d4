/**
 * The file-mutation queue (Pi's, after earendil-works/pi#2327 where parallel edits clobbered each
 * other): edit and write run one at a time per canonical path inside the sandbox; different files run
 * in parallel. Unlike Pi, the key is resolved inside the sandbox, not on the host.
 */
import type { Sandbox } from "../sandbox/types.js";
import { normalizeToolPath } from "../tools/paths.js";
import type { AnyTool } from "../tools/types.js";

/** Per-key promise chains. A task runs after every earlier task with the same key has settled. */
export class FileMutationQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after the earlier tasks queued under `key`; resolves or rejects as `task` does. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Number of keys with queued or running tasks (for tests and metrics). */
  get activeKeys(): number {
    return this.#tails.size;
  }
}

/**
 * The queue key of a call: the canonical path of the file `tool` mutates, resolved inside the sandbox
 * (symlinks and `..` followed; a new file is keyed by its resolved path). Undefined for tools that do
 * not mutate a path. When the sandbox cannot resolve it, the normalised path is the key.
 */
export async function mutationKey(
  tool: AnyTool,
  args: unknown,
  sandbox: Sandbox,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (!tool.mutatesPath) return undefined;
  const requested = normalizeToolPath(tool.mutatesPath(args));
  try {
    return await sandbox.realpath(requested, { signal });
  } catch {
    return requested;
  }
}
