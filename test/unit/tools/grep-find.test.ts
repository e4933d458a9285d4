import { describe, expect, it } from "vitest";
import type { WardenError } from "../../../src/errors.js";
import { createFindTool, FIND_MAX_COLLECTED_BYTES } from "../../../src/tools/find.js";
import { fdGlob, patternClimbsOut } from "../../../src/tools/find-pattern.js";
import { createGrepTool } from "../../../src/tools/grep.js";
import { GrepCollector } from "../../../src/tools/grep-collect.js";
import { isWithinRoot, isWithinRoots } from "../../../src/tools/paths.js";
import {
  displaySearchPath,
  RecordSplitter,
  SEARCH_MAX_BYTES,
  truncateLine,
} from "../../../src/tools/search-common.js";
import type { SpillStore } from "../../../src/tools/types.js";
import { formatSize } from "../../../src/truncate/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const spill = {} as SpillStore;
const roots = ["/workspace"];

function rgLine(type: "match" | "context", path: string, line: number, text: string): string {
  return JSON.stringify({
    type,
    data: { path: { text: path }, lines: { text: `${text}\n` }, line_number: line },
  });
}

function collector(limit: number, context = 0, maxBytes?: number): GrepCollector {
  return new GrepCollector({
    limit,
    context,
    displayPath: (abs) => displaySearchPath(abs, "/workspace", true, roots),
    ...(maxBytes ? { maxBytes } : {}),
  });
}

describe("isWithinRoot (case 2: whole path components)", () => {
  it("case 2: /workspace-evil and /workspace_bak are not inside /workspace", () => {
    expect(isWithinRoot("/workspace-evil/secret.txt", "/workspace")).toBe(false);
    expect(isWithinRoot("/workspace_bak/x", "/workspace")).toBe(false);
    expect(isWithinRoot("/workspace", "/workspace")).toBe(true);
    expect(isWithinRoot("/workspace/a/b", "/workspace")).toBe(true);
    expect(isWithinRoots("/mnt/data/x", ["/workspace", "/mnt/data"])).toBe(true);
  });
});

describe("patternClimbsOut (case 4)", () => {
  it("case 4: refuses '..', absolute, brace and escaped forms", () => {
    for (const p of [
      "../secret/*",
      "{.,..}/secret/*",
      "/etc/*",
      "a/../../x",
      "{a,/etc}/*",
      "\\.\\./x",
      "[.][.]/x",
      "~/x",
    ]) {
      expect([p, patternClimbsOut(p)]).toEqual([p, true]);
    }
  });

  it("allows ordinary patterns, including names with dots", () => {
    for (const p of [
      "*.ts",
      "**/*.json",
      "src/**/*.spec.ts",
      "..foo",
      "a..b/*",
      ".hidden",
      "{a,b}/*.md",
      "~backup*",
    ]) {
      expect([p, patternClimbsOut(p)]).toEqual([p, false]);
    }
  });

  it("matches patterns with '/' against the full path below any directory", () => {
    expect(fdGlob("*.ts")).toEqual({ glob: "*.ts", fullPath: false });
    expect(fdGlob("src/*.ts")).toEqual({ glob: "**/src/*.ts", fullPath: true });
    expect(fdGlob("**/x")).toEqual({ glob: "**/x", fullPath: true });
  });
});

describe("search helpers", () => {
  it("formats sizes and cuts long lines like Pi", () => {
    expect(formatSize(51_200)).toBe("50.0KB");
    expect(formatSize(512)).toBe("512B");
    expect(truncateLine("a".repeat(501))).toEqual({
      text: `${"a".repeat(500)}... [truncated]`,
      truncated: true,
    });
    // Never splits a surrogate pair.
    expect(truncateLine(`${"a".repeat(499)}😀b`).text).toBe(`${"a".repeat(499)}... [truncated]`);
  });

  it("displays paths relative to the search root and drops paths outside the roots", () => {
    expect(displaySearchPath("/workspace/src/a.ts", "/workspace", true, roots)).toBe("src/a.ts");
    expect(displaySearchPath("/workspace/src/a.ts", "/workspace/src/a.ts", false, roots)).toBe("a.ts");
    expect(displaySearchPath("/workspace/../etc/passwd", "/workspace", true, roots)).toBeNull();
    expect(displaySearchPath("/workspace-evil/x", "/workspace", true, roots)).toBeNull();
  });

  it("splits records across chunks and drops oversized ones without buffering them", () => {
    const s = new RecordSplitter(0x0a, 8);
    expect(s.push(Buffer.from("ab\ncd"))).toEqual(["ab"]);
    expect(s.push(Buffer.from("e\n0123456789xyz\nok"))).toEqual(["cde"]);
    expect(s.end()).toEqual(["ok"]);
    expect(s.dropped).toBe(1);
  });
});

describe("GrepCollector", () => {
  it("formats matches and context as rel:N: text and rel-N- text", () => {
    const c = collector(10, 1);
    c.accept(JSON.stringify({ type: "begin", data: { path: { text: "/workspace/a.txt" } } }));
    c.accept(rgLine("context", "/workspace/a.txt", 1, "before"));
    c.accept(rgLine("match", "/workspace/a.txt", 2, "hit\r"));
    c.accept(rgLine("context", "/workspace/a.txt", 3, "after"));
    expect(c.result().lines).toEqual(["a.txt-1- before", "a.txt:2: hit", "a.txt-3- after"]);
    expect(c.result().matchCount).toBe(1);
  });

  it("stops at the first match past the limit, keeping the last match's trailing context", () => {
    const c = collector(2, 1);
    expect(c.accept(rgLine("match", "/workspace/a", 1, "m1"))).toBe("continue");
    expect(c.accept(rgLine("match", "/workspace/a", 5, "m2"))).toBe("continue");
    expect(c.accept(rgLine("context", "/workspace/a", 6, "t"))).toBe("continue");
    expect(c.accept(rgLine("context", "/workspace/a", 7, "lead of next"))).toBe("continue");
    expect(c.accept(rgLine("match", "/workspace/a", 8, "m3"))).toBe("stop");
    expect(c.result().lines).toEqual(["a:1: m1", "a:5: m2", "a-6- t"]);
    expect(c.result().matchLimitReached).toBe(true);
  });

  it("stops at the byte cap with whole lines, and drops paths outside the roots", () => {
    const c = collector(100, 0, 20);
    expect(c.accept(rgLine("match", "/etc/passwd", 1, "root"))).toBe("continue");
    expect(c.accept(rgLine("match", "/workspace/a", 1, "0123456"))).toBe("continue");
    expect(c.accept(rgLine("match", "/workspace/a", 2, "0123456"))).toBe("stop");
    expect(c.result()).toMatchObject({ lines: ["a:1: 0123456"], bytesLimitReached: true, droppedOutside: 1 });
  });
});

function rgOutput(lines: string[]): string[] {
  return lines.map((l) => `${l}\n`);
}

describe("grep tool (fake sandbox)", () => {
  it("runs rg as argv with the pattern after --, and reports the limit", async () => {
    const sb = new FakeSandbox().file("/workspace/a.txt", "x");
    sb.execHandler = () => ({
      stdout: rgOutput([1, 2, 3, 4].map((n) => rgLine("match", "/workspace/a.txt", n, `-e ${n}`))),
      exitCode: 0,
    });
    const out = await createGrepTool().execute(
      "c",
      { pattern: "-e", glob: "*.txt", limit: 2, ignoreCase: true },
      { sandbox: sb, spill },
    );
    expect(sb.execs[0]).toEqual([
      "rg",
      "--json",
      "--line-number",
      "--color=never",
      "--no-config",
      "--hidden",
      "--no-require-git",
      "--sort=path",
      "--ignore-case",
      "--glob=*.txt",
      "--glob=!.git",
      "--",
      "-e",
      ".",
    ]);
    expect(out.content).toEqual([
      {
        type: "text",
        text: "a.txt:1: -e 1\na.txt:2: -e 2\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]",
      },
    ]);
    expect(out.details).toEqual({ matchLimitReached: 2 });
  });

  it("says No matches found, and reports rg errors", async () => {
    const sb = new FakeSandbox();
    sb.execHandler = () => ({ exitCode: 1 });
    const out = await createGrepTool().execute("c", { pattern: "zz" }, { sandbox: sb, spill });
    expect(out.content).toEqual([{ type: "text", text: "No matches found" }]);
    sb.execHandler = () => ({ exitCode: 2, stderr: "regex parse error: unclosed group\n" });
    await expect(createGrepTool().execute("c", { pattern: "(" }, { sandbox: sb, spill })).rejects.toThrow(
      "grep failed: regex parse error: unclosed group",
    );
  });

  it("rejects with AbortError when the caller's signal fired", async () => {
    const sb = new FakeSandbox();
    const controller = new AbortController();
    sb.execHandler = () => {
      controller.abort();
      return { stdout: [`${rgLine("match", "/workspace/a", 1, "x")}\n`], exitCode: 0 };
    };
    const err = await createGrepTool()
      .execute("c", { pattern: "x" }, { sandbox: sb, spill, signal: controller.signal })
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe("AbortError");
  });

  it("case 4: a search path that climbs out is refused before rg runs", async () => {
    const sb = new FakeSandbox().file("/etc/passwd", "root");
    const err = (await createGrepTool()
      .execute("c", { pattern: "root", path: "../../etc" }, { sandbox: sb, spill })
      .catch((e: unknown) => e)) as WardenError;
    expect(err.code).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(err.message).toContain("'/etc'");
    expect(sb.execs).toEqual([]);
  });
});

describe("find tool (fake sandbox)", () => {
  function fdReply(paths: string[]) {
    return { stdout: [paths.map((p) => `${p}\0`).join("")], exitCode: 0 };
  }

  it("case 4: climbing patterns are refused before fd runs", async () => {
    const sb = new FakeSandbox();
    for (const pattern of ["../secret/*", "{.,..}/secret/*", "/etc/*"]) {
      const err = (await createFindTool()
        .execute("c", { pattern }, { sandbox: sb, spill })
        .catch((e: unknown) => e)) as WardenError;
      expect([pattern, err.code]).toEqual([pattern, "INVALID_ARGUMENT"]);
    }
    expect(sb.execs).toEqual([]);
  });

  it("lists relative paths, dirs with '/', drops symlinks resolving outside, and reports the limit", async () => {
    const sb = new FakeSandbox().file("/workspace/.gitignore", "x\n");
    sb.execHandler = (argv) => {
      if (argv[0] === "fd") {
        return fdReply([
          "/workspace/src/",
          "/workspace/src/a.ts",
          "/workspace/leak",
          "/workspace/b.ts",
          "/workspace/c",
        ]);
      }
      const paths = argv.slice(4);
      return {
        stdout: [paths.map((p) => `${p.endsWith("leak") ? "/etc/passwd" : p}\0`).join("")],
        exitCode: 0,
      };
    };
    const out = await createFindTool().execute("c", { pattern: "*", limit: 4 }, { sandbox: sb, spill });
    expect(sb.execs[0]).toEqual([
      "fd",
      "--glob",
      "--color=never",
      "--hidden",
      "--no-ignore-parent",
      "--threads=1",
      "--no-require-git",
      "--exclude",
      ".git",
      "--print0",
      "--max-results",
      "5",
      "--",
      "*",
      "/workspace",
    ]);
    expect(sb.execs[1]).toEqual([
      "realpath",
      "-m",
      "-z",
      "--",
      "/workspace/src/a.ts",
      "/workspace/leak",
      "/workspace/b.ts",
    ]);
    expect(out.content).toEqual([
      {
        type: "text",
        text:
          "b.ts\nsrc/\nsrc/a.ts\n\n[4 results limit reached. Use limit=8 for more, or refine pattern. " +
          "1 entry omitted: resolved outside the workspace]",
      },
    ]);
  });

  it("stops collecting paths at FIND_MAX_COLLECTED_BYTES whatever the limit (controller memory)", async () => {
    const sb = new FakeSandbox();
    // 3,000 paths of 4,000 bytes (12 MB): the search stops after the 2,098th (8,392,000 bytes).
    const path = (i: number) => `/workspace/${"d".repeat(3985)}${String(i).padStart(4, "0")}`;
    const resolved: string[] = [];
    sb.execHandler = (argv) => {
      if (argv[0] === "fd") return fdReply(Array.from({ length: 3000 }, (_, i) => path(i)));
      resolved.push(...argv.slice(4));
      return {
        stdout: [
          argv
            .slice(4)
            .map((p) => `${p}\0`)
            .join(""),
        ],
        exitCode: 0,
      };
    };
    const out = await createFindTool().execute("c", { pattern: "*", limit: 1e12 }, { sandbox: sb, spill });
    expect(resolved.length).toBe(2098);
    const text = (out.content[0] as { text: string }).text;
    expect(text.split("\n\n")[1]).toBe(
      `[${formatSize(SEARCH_MAX_BYTES)} limit reached. Search stopped after ${formatSize(FIND_MAX_COLLECTED_BYTES)} of paths (2098 results); refine pattern or use a smaller limit]`,
    );
    expect(out.details).toEqual({
      bytesLimitReached: true,
      collectedBytesLimitReached: FIND_MAX_COLLECTED_BYTES,
    });
  });

  it("says No files found matching pattern", async () => {
    const sb = new FakeSandbox();
    sb.execHandler = () => fdReply([]);
    const out = await createFindTool().execute("c", { pattern: "*.nope" }, { sandbox: sb, spill });
    expect(out.content).toEqual([{ type: "text", text: "No files found matching pattern" }]);
  });
});

describe("find with an fd older than 8.7 (an image warden did not build)", () => {
  it("runs again without --no-require-git, with the search directory's own .gitignore as --ignore-file", async () => {
    const sb = new FakeSandbox().file("/workspace/.gitignore", "x\n");
    const spill = { owns: () => false } as unknown as SpillStore;
    sb.execHandler = (argv) =>
      argv.includes("--no-require-git")
        ? {
            stdout: [],
            stderr: "error: Found argument '--no-require-git' which wasn't expected",
            exitCode: 2,
          }
        : { stdout: ["/workspace/a.ts\0"], exitCode: 0 };
    const out = await createFindTool().execute("c", { pattern: "*.ts" }, { sandbox: sb, spill });
    expect(out.content).toEqual([{ type: "text", text: "a.ts" }]);
    expect(sb.execs[1]).toEqual([
      "fd",
      "--glob",
      "--color=never",
      "--hidden",
      "--no-ignore-parent",
      "--threads=1",
      "--exclude",
      ".git",
      "--print0",
      "--max-results",
      "1001",
      "--ignore-file",
      "/workspace/.gitignore",
      "--",
      "*.ts",
      "/workspace",
    ]);
  });
});
