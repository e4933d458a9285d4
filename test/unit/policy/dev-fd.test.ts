/**
 * Issue 37, item 4: the descriptor model of bash/fds.ts (pure) and what analyzeBash and evaluate
 * make of /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N and /proc/self/fd/N. The same corpus runs
 * through a live session in test/engine/policy/dev-fd.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  applyRedirection,
  type FdTable,
  isProcessFdPath,
  resolveFdPath,
  TOOL_STREAMS,
  unknownFds,
} from "../../../src/policy/bash/fds.js";
import { analyzeBash, type EvaluateContext, loadBashParser } from "../../../src/policy/index.js";
import { DEV_FD_CORPUS } from "../../fixtures/devfd-corpus.js";
import { shippedPolicies } from "../../helpers/policy.js";

const entries = (d: { trail: { kind: string; part: string }[] }) => d.trail.map((t) => `${t.kind} ${t.part}`);

/** `table` after the redirections, in order. */
function applied(table: FdTable, ...rs: Parameters<typeof applyRedirection>[1][]): FdTable {
  return rs.reduce((t, r) => applyRedirection(t, r).table, table);
}

describe("the descriptor table (bash/fds.ts)", () => {
  it("a tool call's bash starts with /dev/null on 0, the result on 1 and 2, and nothing else open", () => {
    expect(resolveFdPath(TOOL_STREAMS, "/dev/stdin")).toMatchObject({ kind: "stream", target: "/dev/null" });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/stdout")).toMatchObject({
      kind: "stream",
      target: "/dev/stdout",
    });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/fd/2")).toMatchObject({ kind: "stream", target: "/dev/stderr" });
    expect(resolveFdPath(TOOL_STREAMS, "/proc/self/fd/1")).toMatchObject({
      kind: "stream",
      target: "/dev/stdout",
    });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/fd/3")).toMatchObject({ kind: "stream", target: "/dev/fd/3" });
    expect(resolveFdPath(TOOL_STREAMS, "../dev/stderr")).toMatchObject({
      kind: "stream",
      target: "/dev/stderr",
    });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/fd")).toMatchObject({ kind: "stream", target: "/dev/fd" });
    expect(resolveFdPath(TOOL_STREAMS, "notes.txt")).toEqual({ kind: "path", target: "notes.txt" });
  });

  it("a descriptor opened on a file names that file, whatever access opened it; what follows is below it", () => {
    const read = applied(TOOL_STREAMS, { op: "open", fd: 3, target: "notes.txt" });
    expect(resolveFdPath(read, "/dev/fd/3")).toEqual({ kind: "path", target: "notes.txt" });
    expect(resolveFdPath(read, "/proc/thread-self/fd/3")).toEqual({ kind: "path", target: "notes.txt" });
    const dir = applied(TOOL_STREAMS, { op: "open", fd: 3, target: "/workspace" });
    expect(resolveFdPath(dir, "/dev/fd/3/.env")).toEqual({ kind: "path", target: "/workspace/.env" });
  });

  it("redirections apply in order: dups copy, moves and closes close, &> sets 1 and 2, here-strings feed 0", () => {
    const t = applied(
      TOOL_STREAMS,
      { op: "open", fd: 1, target: "notes.txt" },
      { op: "dup", fd: 2, from: 1 },
      { op: "dup", fd: 4, from: 2, move: true },
      { op: "close", fd: 1 },
      { op: "feed", fd: 0 },
    );
    expect(resolveFdPath(t, "/dev/fd/4")).toEqual({ kind: "path", target: "notes.txt" });
    expect(resolveFdPath(t, "/dev/stderr")).toMatchObject({ kind: "stream", target: "/dev/fd/2" });
    expect(resolveFdPath(t, "/dev/stdout")).toMatchObject({ kind: "stream", target: "/dev/fd/1" });
    expect(resolveFdPath(t, "/dev/stdin")).toMatchObject({ kind: "stream", target: "/dev/stdin" });
    const both = applied(TOOL_STREAMS, { op: "open", fd: 1, both: true, target: "out.txt" });
    expect(resolveFdPath(both, "/dev/stderr")).toEqual({ kind: "path", target: "out.txt" });
    // Opening a descriptor name makes the new descriptor hold what that one holds.
    const via = applied(
      TOOL_STREAMS,
      { op: "open", fd: 3, target: "a.txt" },
      { op: "open", fd: 1, target: "/dev/fd/3" },
    );
    expect(resolveFdPath(via, "/dev/stdout")).toEqual({ kind: "path", target: "a.txt" });
  });

  it("unknown descriptors, another process's, and `..` after a descriptor are opaque", () => {
    expect(resolveFdPath(unknownFds("an exec in the script may have redirected"), "/dev/fd/3")).toEqual({
      kind: "opaque",
      why: "/dev/fd/3 names file descriptor 3, which an exec in the script may have redirected",
    });
    expect(resolveFdPath(TOOL_STREAMS, "/proc/1/fd/0")).toMatchObject({ kind: "opaque" });
    expect(resolveFdPath(TOOL_STREAMS, "/proc/self/task/7/fd/1")).toMatchObject({ kind: "opaque" });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/stdout/..")).toMatchObject({ kind: "opaque" });
    expect(resolveFdPath(TOOL_STREAMS, "/dev/fd/3/../.env")).toMatchObject({ kind: "opaque" });
  });

  it("isProcessFdPath: a path resolved into some process's descriptor table", () => {
    expect(isProcessFdPath("/proc/14/fd/pipe:[1498391]")).toBe(true);
    expect(isProcessFdPath("/proc/14/task/14/fd/anon_inode:[eventpoll]")).toBe(true);
    expect(isProcessFdPath("/proc/14/fd")).toBe(false);
    expect(isProcessFdPath("/workspace/proc/14/fd/1")).toBe(false);
  });
});

describe("analyzeBash and evaluate on descriptor names", () => {
  const shipped = shippedPolicies("default", "readonly");
  beforeAll(loadBashParser);

  it("`echo hi 1<notes.txt >/dev/stdout`: a write of notes.txt (Linux reopens it for writing)", () => {
    expect(analyzeBash("echo hi 1<notes.txt >/dev/stdout").filter((p) => p.kind !== "command")).toEqual([
      { kind: "argument", target: "hi", text: "echo hi", via: [], identity: null },
      { kind: "read", target: "notes.txt", text: "1<notes.txt", via: [] },
      { kind: "write", target: "notes.txt", text: ">/dev/stdout", via: [] },
    ]);
  });

  it("`echo hi >/dev/stderr`: a write of the stream, marked never to be resolved in the sandbox", () => {
    expect(analyzeBash("echo hi >/dev/stderr").at(-1)).toEqual({
      kind: "write",
      target: "/dev/stderr",
      text: ">/dev/stderr",
      via: [],
      stream: true,
    });
  });

  it.each(DEV_FD_CORPUS)("$command: default $default, readonly $readonly, judged as $judged", async (c) => {
    for (const name of ["default", "readonly"] as const) {
      const d = await shipped.decide(name, c.command);
      expect([name, d.decision]).toEqual([name, c[name]]);
      expect(entries(d)).toContain(c.judged);
    }
  });

  it("the live resolver is never asked about a descriptor name (the helper's would answer)", async () => {
    const asked: string[] = [];
    const helper: EvaluateContext = {
      resolvePath: async (path) => {
        asked.push(path);
        return path;
      },
    };
    for (const c of DEV_FD_CORPUS) await shipped.decide("default", c.command, helper);
    expect(asked.filter((p) => /^\/(dev\/(fd|std)|proc\/)/.test(p))).toEqual([]);
  });

  it("a path the helper resolves into a descriptor table (a link to /dev/stdout) is opaque, shown as written", async () => {
    const helper: EvaluateContext = {
      resolvePath: async (path) => (path === "/workspace/out" ? "/proc/14/fd/pipe:[1498391]" : path),
    };
    const d = await shipped.decide("default", "echo hi >out", helper);
    expect(d.decision).toBe("ask");
    expect(d.part).toBe(">out");
    expect(d.reason).toBe(
      "the path leads through a link to a file descriptor (/dev/fd); the policy cannot tell which file the command would open",
    );
    expect(JSON.stringify(d)).not.toContain("/proc/14");
  });

  it("words after a redirection's target are the command's arguments (tree-sitter-bash reads them as targets)", async () => {
    const d = await shipped.decide("readonly", "cat </dev/null .env");
    expect([d.decision, d.ruleId, d.part]).toEqual(["deny", "deny-secrets", "/workspace/.env"]);
    expect(analyzeBash("cat <x a >y b")[0]).toMatchObject({ kind: "command", text: "cat a b" });
  });

  it("a 0 right before < or > is the descriptor, not an argument", () => {
    expect(analyzeBash("echo a 0>&3")[0]).toMatchObject({ kind: "command", text: "echo a" });
    expect(analyzeBash("echo a 0 >x")[0]).toMatchObject({ kind: "command", text: "echo a 0" });
  });

  it("a process substitution is the pipe bash opens on the command's fd 63, read or written", () => {
    const args = (script: string) =>
      analyzeBash(script).filter((p) => p.kind === "argument" || p.kind === "opaque");
    expect(args("diff <(sort a) x")).toEqual([
      {
        kind: "argument",
        target: "/dev/stdin",
        text: "diff <(sort a) x",
        via: [],
        identity: null,
        word: "<(sort a)",
        stream: true,
      },
      { kind: "argument", target: "x", text: "diff <(sort a) x", via: [], identity: null },
      { kind: "argument", target: "a", text: "sort a", via: [], identity: '["sort","a"]' },
    ]);
    expect(args("tee >(wc -l)")[0]).toMatchObject({ target: "/dev/stdout", stream: true });
    // `< <(cmd)` feeds the pipe on fd 0: no opaque target.
    expect(args("uniq -c < <(sort w)")).toEqual([
      { kind: "argument", target: "w", text: "sort w", via: [], identity: null },
    ]);
  });
});
