/**
 * The file-mutation queue (Pi's, after earendil-works/pi#2327 where parallel edits clobbered each
 * other): edit and write run one at a time per canonical path inside the sandbox, in call order;
 * different files run in parallel. Unlike Pi, the key is resolved inside the sandbox, not on the host,
 * which takes a round trip: so a call takes its place in call order first (synchronously, as Pi takes
 * its key) and joins its key's queue once its key and every earlier call's key are known.
 */
import type { Sandbox } from "../sandbox/index.js";
import type { AnyTool } from "../tools/index.js";
import { normalizeToolPath } from "../tools/index.js";
import { omitUndefined } from "../util/index.js";

/** Per-key promise chains, joined in the order places were taken. */
export class FileMutationQueue {
  readonly #tails = new Map<string, Promise<unknown>>();
  /** Settles once the latest place taken by runInOrder has joined its key's queue. */
  #lastJoin: Promise<void> = Promise.resolve();

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

  /**
   * Takes the next place now and runs `task` under the key `key` resolves to, after every task of
   * an earlier place with the same key. Call it synchronously as each call starts, in call order:
   * keys may resolve in any order (two spellings of one file, e.g. a symlink alias, resolve to one
   * key), but a place joins its key's queue only after every earlier place has joined, so tasks of
   * one key run in the order their places were taken. Tasks of different keys still run in parallel;
   * a place waits only for earlier keys to resolve, not for earlier tasks to finish. Rejects as
   * `task` does, or with `key`'s rejection (then `task` does not run).
   */
  runInOrder<T>(key: Promise<string>, task: () => Promise<T>): Promise<T> {
    const earlier = this.#lastJoin;
    let joined!: () => void;
    this.#lastJoin = new Promise<void>((resolve) => {
      joined = resolve;
    });
    const settledKey = key.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    return Promise.all([settledKey, earlier]).then(([resolved]) => {
      try {
        if (!resolved.ok) throw resolved.error;
        return this.run(resolved.value, task);
      } finally {
        joined();
      }
    });
  }

  /** Number of keys with queued or running tasks (for tests and metrics). */
  get activeKeys(): number {
    return this.#tails.size;
  }
}

/**
 * The queue key of a call: the canonical path of the file `tool` mutates, resolved inside the sandbox
 * (symlinks and `..` followed; a new file is keyed by its resolved path). Undefined, synchronously,
 * for tools that do not mutate a path, so a caller knows at once whether to take a place with
 * runInOrder. When the sandbox cannot resolve it, the normalised path is the key.
 */
export function mutationKey(
  tool: AnyTool,
  args: unknown,
  sandbox: Sandbox,
  signal?: AbortSignal,
): Promise<string> | undefined {
  if (!tool.mutatesPath) return undefined;
  const requested = normalizeToolPath(tool.mutatesPath(args));
  return sandbox.realpath(requested, omitUndefined({ signal })).catch(() => requested);
}
