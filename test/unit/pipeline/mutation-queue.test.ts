import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { FileMutationQueue, mutationKey, runToolCalls } from "../../../src/pipeline/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { contextWith, echoTool, sleep } from "../../helpers/pipeline-fakes.js";

/** A fake edit: read-modify-write of an in-memory file with a pause in between (a lost update if unserialised). */
function fakeEdit(files: Map<string, string>, log: string[]): AnyTool {
  return echoTool({
    name: "edit",
    parameters: Type.Object({ path: Type.String(), add: Type.String() }),
    mutatesPath: (args) => (args as { path: string }).path,
    execute: async (_id: string, args: { path: string; add: string }, ctx) => {
      const key = await ctx.sandbox.realpath(args.path);
      log.push(`start ${args.add}`);
      const before = files.get(key) ?? "";
      await sleep(20);
      files.set(key, before + args.add);
      log.push(`end ${args.add}`);
      return { content: [{ type: "text", text: "ok" }] };
    },
  });
}

describe("FileMutationQueue", () => {
  it("runs tasks with one key one at a time, in order, even after a failure", async () => {
    const queue = new FileMutationQueue();
    const log: string[] = [];
    const task =
      (tag: string, fail = false) =>
      async () => {
        log.push(`start ${tag}`);
        await sleep(10);
        log.push(`end ${tag}`);
        if (fail) throw new Error(tag);
        return tag;
      };
    const results = await Promise.allSettled([queue.run("k", task("1", true)), queue.run("k", task("2"))]);
    expect(log).toEqual(["start 1", "end 1", "start 2", "end 2"]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect(queue.activeKeys).toBe(0);
  });

  it("runs tasks with different keys in parallel", async () => {
    const queue = new FileMutationQueue();
    const log: string[] = [];
    const task = (tag: string) => async () => {
      log.push(`start ${tag}`);
      await sleep(10);
      log.push(`end ${tag}`);
    };
    await Promise.all([queue.run("a", task("a")), queue.run("b", task("b"))]);
    expect(log).toEqual(["start a", "start b", "end a", "end b"]);
  });
});

describe("mutationKey", () => {
  it("is the canonical path resolved in the sandbox, and undefined for tools that mutate nothing", async () => {
    const sandbox = new FakeSandbox({ links: { "/workspace/link.txt": "/workspace/real.txt" } });
    const edit = fakeEdit(new Map(), []);
    expect(await mutationKey(edit, { path: "link.txt" }, sandbox)).toBe("/workspace/real.txt");
    expect(await mutationKey(edit, { path: "@./new/file.txt" }, sandbox)).toBe("/workspace/new/file.txt");
    expect(await mutationKey(echoTool(), { text: "x" }, sandbox)).toBeUndefined();
  });
});

describe("edits in one batch", () => {
  it("serialises edits of one file reached by two names (symlink), never losing an update", async () => {
    const files = new Map<string, string>();
    const log: string[] = [];
    const ctx = contextWith([fakeEdit(files, log)], {
      sandbox: new FakeSandbox({ links: { "/workspace/alias.txt": "/workspace/n.txt" } }),
    });
    const results = await runToolCalls(
      [
        { id: "1", name: "edit", arguments: { path: "n.txt", add: "A" } },
        { id: "2", name: "edit", arguments: { path: "alias.txt", add: "B" } },
      ],
      ctx,
    );
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    expect(files.get("/workspace/n.txt")).toBe("AB");
    expect(log).toEqual(["start A", "end A", "start B", "end B"]);
  });

  it("queues edits of one file in source order even when resolving the first one's path is slower (found by test/pi)", async () => {
    const files = new Map<string, string>();
    const log: string[] = [];
    const sandbox = new FakeSandbox();
    const resolve = sandbox.realpath.bind(sandbox);
    let first = true;
    sandbox.realpath = async (path, options) => {
      // The first resolution answers last, as a busy engine may: the queue must still keep source order.
      if (first) {
        first = false;
        await sleep(30);
      }
      return resolve(path, options);
    };
    await runToolCalls(
      [
        { id: "1", name: "edit", arguments: { path: "q.txt", add: "1" } },
        { id: "2", name: "edit", arguments: { path: "q.txt", add: "2" } },
        { id: "3", name: "edit", arguments: { path: "q.txt", add: "3" } },
      ],
      contextWith([fakeEdit(files, log)], { sandbox }),
    );
    expect(files.get("/workspace/q.txt")).toBe("123");
  });

  it("edits different files in parallel", async () => {
    const files = new Map<string, string>();
    const log: string[] = [];
    await runToolCalls(
      [
        { id: "1", name: "edit", arguments: { path: "a.txt", add: "A" } },
        { id: "2", name: "edit", arguments: { path: "b.txt", add: "B" } },
      ],
      contextWith([fakeEdit(files, log)]),
    );
    expect(log).toEqual(["start A", "start B", "end A", "end B"]);
  });
});

describe("FileMutationQueue.runInOrder", () => {
  const deferred = <T>() => {
    let resolve!: (value: T) => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };

  it("runs tasks of one key in the order places were taken, whatever order keys resolve in", async () => {
    const queue = new FileMutationQueue();
    const log: string[] = [];
    const keys = [deferred<string>(), deferred<string>(), deferred<string>()];
    const task = (tag: string) => async () => {
      log.push(tag);
      return tag;
    };
    const runs = keys.map((key, i) => queue.runInOrder(key.promise, task(String(i + 1))));
    keys[2]?.resolve("k");
    keys[1]?.reject(new Error("no key"));
    await sleep(0);
    expect(log).toEqual([]);
    keys[0]?.resolve("k");
    const settled = await Promise.allSettled(runs);
    expect(log).toEqual(["1", "3"]);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual([
      "1",
      "no key",
      "3",
    ]);
    expect(queue.activeKeys).toBe(0);
  });

  it("waits for earlier keys to resolve, not for an earlier task of another key to finish", async () => {
    const queue = new FileMutationQueue();
    const first = deferred<void>();
    const running = queue.runInOrder(Promise.resolve("a"), () => first.promise.then(() => "a done"));
    expect(await queue.runInOrder(Promise.resolve("b"), async () => "b done")).toBe("b done");
    first.resolve();
    expect(await running).toBe("a done");
  });
});
