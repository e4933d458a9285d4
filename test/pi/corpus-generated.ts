/**
 * The seeded generated corpus: tool calls over the synthetic workspace (corpus-workspace.ts), in
 * batches as a model would send them. Each call id names its case (`g<batch>-<n>-<tag>`), so a
 * listed difference can name the cases it covers. Deterministic for a seed.
 */

import { prng } from "./corpus-workspace.js";
import type { CorpusCall } from "./pi-container.js";

type Args = Record<string, unknown> | string;

const TEXT_FILES = [
  "plain.txt",
  "no-final-newline.txt",
  "empty.txt",
  "one-newline.txt",
  "crlf.txt",
  "mixed.txt",
  "cr-only.txt",
  "bom.txt",
  "bom-crlf.txt",
  "quotes.txt",
  "tabs.ts",
  "dup.txt",
  "long-first-line.txt",
  "long-third-line.txt",
  "wide.txt",
  "big.txt",
  "exact-2000.txt",
  "src/main.ts",
  "docs/guide.md",
  "spaces in name.txt",
];
const ODD_FILES = [
  "binary.dat",
  "latin1.txt",
  "invalid-utf8.txt",
  "ansi.txt",
  "nul-late.txt",
  "images/large.png",
  "images/tall.jpg",
  "images/small.png",
  "images/small.jpg",
  "images/small.gif",
  "images/tiny.gif",
  "images/truncated.png",
  "images/wide.gif",
  "images/one.png",
  "images/truncated.jpg",
  "images/not-really.png",
  "missing.txt",
  "src",
  "empty-dir",
  "link-to-file",
  "link-to-dir",
  "dangling-link",
  "loop-a",
  "nfc-caf\u00e9.txt",
  "nfc-cafe\u0301.txt",
  "nfd-cafe\u0301.txt",
  "nfd-caf\u00e9.txt",
  "./plain.txt",
  "/workspace/plain.txt",
  "@plain.txt",
  "src/../plain.txt",
];
const OFFSETS = [undefined, 0, 1, 2, 3, 10, 1999, 2000, 2001, 2500, 2501, 2502, 9999, -1, 1.5];
const LIMITS = [undefined, 1, 2, 5, 100, 2000, 2001, 0, -3, 2.7];

/** Builds the corpus: `batches[i]` is one assistant message's calls. */
export function generatedCorpus(seed: number): CorpusCall[][] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const batches: CorpusCall[][] = [];
  let batch: CorpusCall[] = [];
  const add = (tag: string, name: string, args: Args) => {
    batch.push({ id: `g${batches.length}-${batch.length}-${tag}`, name, arguments: args });
  };
  const flush = () => {
    if (batch.length > 0) batches.push(batch);
    batch = [];
  };

  // Make repo/ a git repository first, so its nested .gitignore applies as inside a repository.
  add("git-init", "bash", { command: "cd repo && git init -q && echo ok" });
  flush();

  // read: every text file plain, then offset/limit combinations.
  for (const path of [...TEXT_FILES, ...ODD_FILES]) add("read", "read", { path });
  flush();
  for (let i = 0; i < 160; i++) {
    const args: Record<string, unknown> = { path: pick(TEXT_FILES) };
    const offset = pick(OFFSETS);
    const limit = pick(LIMITS);
    if (offset !== undefined) args.offset = offset;
    if (limit !== undefined) args.limit = limit;
    add("read-range", "read", args);
    if (batch.length >= 8) flush();
  }
  flush();
  for (const path of ["long-first-line.txt", "long-third-line.txt"]) {
    for (const offset of [1, 2, 3, 4]) add("read-long", "read", { path, offset, limit: 1 });
  }
  flush();

  // ls
  for (const path of [
    undefined,
    ".",
    "src",
    "Mixed",
    "many",
    "empty-dir",
    "missing",
    "plain.txt",
    "link-to-dir",
    "outside",
    "repo",
  ]) {
    add("ls", "ls", path === undefined ? {} : { path });
  }
  for (const limit of [1, 5, 10, 31, 0]) add("ls-limit", "ls", { path: "many", limit });
  flush();

  // find
  const findPatterns = [
    "*.ts",
    "*.txt",
    "**/*.json",
    "src/**/*.ts",
    "*.png",
    "*.nothing",
    "**",
    "*",
    "deep*",
    "*.log",
    "nfd-*",
    "Mixed/*",
  ];
  for (const pattern of findPatterns) add("find", "find", { pattern });
  for (const path of ["src", "outside", "repo", "many", "missing", "plain.txt"])
    add("find-path", "find", { pattern: "*", path });
  for (const limit of [1, 3, 10, 30]) add("find-limit", "find", { pattern: "*.txt", path: "many", limit });
  flush();

  // grep
  const grepCases: Record<string, unknown>[] = [
    { pattern: "needle" },
    { pattern: "needle", path: "src" },
    { pattern: "needle", path: "outside" },
    { pattern: "needle", path: "repo" },
    { pattern: "needle", path: "src/util.ts" },
    { pattern: "needle", ignoreCase: true },
    { pattern: "NEEDLE", ignoreCase: true, path: "src" },
    { pattern: "x+y", literal: true },
    { pattern: "x+y" },
    { pattern: "a.b", literal: true, path: "plain.txt" },
    { pattern: "needle", glob: "*.ts" },
    { pattern: "needle", glob: "**/*.md" },
    { pattern: "needle", context: 1, path: "src" },
    { pattern: "line 5 ", context: 2, path: "plain.txt" },
    { pattern: "needle", limit: 2 },
    { pattern: "needle", limit: 1, path: "many" },
    { pattern: "needle", limit: 1, path: "src/util.ts" },
    { pattern: "needle", limit: 2, path: "src/util.ts" },
    { pattern: "needle", path: "docs/long-match.md" },
    { pattern: "nothing-matches-this" },
    { pattern: "needle", path: "missing" },
    { pattern: "([unclosed" },
    { pattern: "caf", path: "latin1.txt" },
    { pattern: "red", path: "ansi.txt" },
    { pattern: "second", path: "crlf.txt" },
    { pattern: "hello", path: "quotes.txt" },
    { pattern: "line 2", path: "big.txt", limit: 5 },
    { pattern: "z", path: "wide.txt", limit: 3 },
  ];
  for (const args of grepCases) add("grep", "grep", args);
  flush();

  // bash: output, stderr, exit codes, floods, timeouts.
  const bashCases: Record<string, unknown>[] = [
    { command: "echo hello" },
    { command: "echo out; echo err >&2" },
    { command: "echo err only >&2" },
    { command: "exit 3" },
    { command: "echo before; exit 7" },
    { command: "true" },
    { command: "false" },
    { command: "seq 1 5000" },
    { command: "seq 1 100000 | head -c 200000" },
    { command: "yes abcdefghij | head -c 80000" },
    { command: "printf 'no newline'" },
    { command: "printf 'a\\r\\nb\\r\\n'" },
    { command: "printf '\\x00\\x01binary\\n'" },
    { command: "printf '\\xc3\\x28 invalid\\n'" },
    { command: "printf '\\033[31mred\\033[0m\\n'" },
    { command: "head -c 70000 /dev/zero | tr '\\0' 'q'; echo" },
    { command: "sleep 5; echo late", timeout: 1 },
    { command: "echo started; sleep 5", timeout: 1 },
    { command: "echo fast", timeout: 5 },
    { command: "pwd" },
    { command: "ls -a | head -5" },
    { command: "cat missing.txt" },
    { command: "nonexistent-command-xyz" },
    { command: "echo $HOME" },
    { command: "wc -l big.txt" },
    { command: "" },
    { command: "echo x", timeout: 0 },
    { command: "echo x", timeout: -1 },
    { command: "for i in 1 2 3; do echo $i; echo e$i >&2; done" },
  ];
  for (const args of bashCases) add("bash", "bash", args);
  flush();

  // edit and write: one target file per case family, so one difference does not cascade.
  const editCases: [string, Record<string, unknown>][] = [
    ["edit-plain", { path: "edit/a.txt", edits: [{ oldText: "beta", newText: "BETA" }] }],
    ["edit-again", { path: "edit/a.txt", edits: [{ oldText: "beta", newText: "x" }] }],
    ["edit-same", { path: "edit/a.txt", edits: [{ oldText: "alpha", newText: "alpha" }] }],
    ["edit-empty-old", { path: "edit/a.txt", edits: [{ oldText: "", newText: "x" }] }],
    ["edit-crlf", { path: "edit/crlf.txt", edits: [{ oldText: "two\nthree", newText: "2\n3" }] }],
    ["edit-bom", { path: "edit/bom.txt", edits: [{ oldText: "head", newText: "HEAD" }] }],
    ["edit-quotes", { path: "edit/quotes.txt", edits: [{ oldText: 'say "hi" now', newText: "say hello" }] }],
    ["edit-quotes2", { path: "edit/quotes.txt", edits: [{ oldText: "and 'this'", newText: "and that" }] }],
    ["edit-tabs", { path: "edit/tabs.py", edits: [{ oldText: "\t\treturn 1", newText: "\t\treturn 10" }] }],
    [
      "edit-tabs-spaces",
      { path: "edit/tabs.py", edits: [{ oldText: "    return 2", newText: "    return 20" }] },
    ],
    [
      "edit-multi",
      {
        path: "edit/multi.txt",
        edits: [
          { oldText: "two", newText: "2" },
          { oldText: "four", newText: "4" },
        ],
      },
    ],
    [
      "edit-multi-overlap",
      {
        path: "edit/multi.txt",
        edits: [
          { oldText: "three\n4", newText: "x" },
          { oldText: "4\nfive", newText: "y" },
        ],
      },
    ],
    [
      "edit-multi-missing",
      {
        path: "edit/multi.txt",
        edits: [
          { oldText: "one", newText: "1" },
          { oldText: "absent", newText: "z" },
        ],
      },
    ],
    ["edit-dup", { path: "dup.txt", edits: [{ oldText: "same", newText: "diff" }] }],
    [
      "edit-trailing",
      { path: "edit/trailing.txt", edits: [{ oldText: "keep\nthis", newText: "kept\nthat" }] },
    ],
    ["edit-latin1", { path: "edit/latin1.txt", edits: [{ oldText: "caf", newText: "CAF" }] }],
    ["edit-dashes", { path: "edit/dashes.txt", edits: [{ oldText: "a - b - c", newText: "abc" }] }],
    ["edit-mixed", { path: "edit/mixed.txt", edits: [{ oldText: "b\nc", newText: "B\nC" }] }],
    ["edit-missing-file", { path: "edit/nope.txt", edits: [{ oldText: "a", newText: "b" }] }],
    ["edit-dir", { path: "src", edits: [{ oldText: "a", newText: "b" }] }],
    ["edit-not-found", { path: "edit/a.txt", edits: [{ oldText: "zeta", newText: "b" }] }],
    ["edit-legacy", { path: "edit/a.txt", oldText: "gamma", newText: "GAMMA" }],
    ["edit-json-string", { path: "edit/a.txt", edits: '[{"oldText":"alpha","newText":"ALPHA"}]' }],
    ["edit-extra-prop", { path: "edit/a.txt", edits: [{ oldText: "ALPHA", newText: "alpha", extra: 1 }] }],
    ["edit-no-edits", { path: "edit/a.txt", edits: [] }],
    ["edit-wrong-type", { path: "edit/a.txt", edits: [{ oldText: 1, newText: "x" }] }],
    ["edit-nfc-nfd", { path: "nfc-cafe\u0301.txt", edits: [{ oldText: "NFC", newText: "nfc" }] }],
  ];
  for (const [tag, args] of editCases) {
    add(tag, "edit", args);
    flush();
  }
  const writeCases: [string, Record<string, unknown>][] = [
    ["write-new", { path: "new/dir/file.txt", content: "hello\n" }],
    ["write-over", { path: "plain.txt", content: "replaced\n" }],
    ["write-dir", { path: "src", content: "x" }],
    ["write-empty", { path: "empty-new.txt", content: "" }],
    ["write-crlf", { path: "w-crlf.txt", content: "a\r\nb\r\n" }],
    ["write-unicode-name", { path: "ünï-cödé.txt", content: "ü\n" }],
    ["write-missing-content", { path: "x.txt" }],
  ];
  for (const [tag, args] of writeCases) add(tag, "write", args);
  flush();
  for (const path of ["new/dir/file.txt", "plain.txt", "empty-new.txt", "w-crlf.txt", "ünï-cödé.txt"])
    add("read-after-write", "read", { path });
  flush();

  // A parallel batch of writes and edits on one file: the mutation queue keeps the source order.
  add("queue-write", "write", { path: "q.txt", content: "v1\n" });
  add("queue-edit", "edit", { path: "q.txt", edits: [{ oldText: "v1", newText: "v2" }] });
  add("queue-edit", "edit", { path: "q.txt", edits: [{ oldText: "v2", newText: "v3" }] });
  flush();
  add("queue-read", "read", { path: "q.txt" });
  flush();

  // Arguments as a model may send them: unknown tools, wrong types, raw and truncated JSON.
  add("unknown-tool", "rm", { path: "x" });
  add("missing-arg", "read", {});
  add("wrong-type", "read", { path: 5 });
  add("string-number", "read", { path: "plain.txt", limit: "2" });
  add("raw-json", "read", '{"path":"plain.txt","limit":1}');
  add("truncated-json", "read", '{"path":"plain.txt","limit":1');
  add("not-json", "ls", "not json at all");
  add("extra-arg", "ls", { path: ".", bogus: true });
  flush();

  // Home and path forms.
  for (const path of ["~", "~/plain.txt", "link-outside", "/etc/hostname", "../etc/passwd", "src/up-two"])
    add("path-form", "read", { path });
  for (const path of ["~", "/", "..", "/workspace"]) add("path-form-ls", "ls", { path });
  flush();

  // Random mix to reach the hard parts in more combinations.
  for (let i = 0; i < 150; i++) {
    const r = rand();
    if (r < 0.4)
      add("mix-read", "read", { path: pick([...TEXT_FILES, ...ODD_FILES]), limit: pick([1, 3, 50]) });
    else if (r < 0.6)
      add("mix-grep", "grep", {
        pattern: pick(["needle", "line 1", "^#", "é", "\\d+"]),
        path: pick([".", "src", "docs", "outside", "repo"]),
        limit: pick([1, 5, 100]),
      });
    else if (r < 0.8)
      add("mix-find", "find", {
        pattern: pick(["*.txt", "*.md", "**/*.ts", "*e*"]),
        path: pick([".", "src", "many", "outside", "repo"]),
      });
    else add("mix-ls", "ls", { path: pick([".", "src", "Mixed", "images", "docs"]) });
    if (batch.length >= 6) flush();
  }
  flush();
  return batches;
}
