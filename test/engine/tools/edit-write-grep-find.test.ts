/**
 * edit, write, grep and find against a real hardened sandbox: public-faults cases 1, 2, 4, 9, 10, 12,
 * output formats, limits and .gitignore handling (earendil-works/pi#5960).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { WardenError } from "../../../src/errors.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { createEditTool } from "../../../src/tools/edit.js";
import { createFindTool } from "../../../src/tools/find.js";
import { createGrepTool } from "../../../src/tools/grep.js";
import type { AnyTool, SpillStore, ToolOutput } from "../../../src/tools/types.js";
import { createWriteTool } from "../../../src/tools/write.js";
import { backendLeftovers, createTestSandbox, describeBackend } from "../../helpers/backend.js";

const tenant = "test-tools-ewgf";
const tools: Record<string, AnyTool> = {
  edit: createEditTool(),
  write: createWriteTool(),
  grep: createGrepTool(),
  find: createFindTool(),
};

describeBackend("edit, write, grep, find in the sandbox", () => {
  let sandbox: Sandbox;

  async function sh(script: string): Promise<string> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const r = await sandbox.exec(
      { shell: script },
      { onStdout: (c) => out.push(Buffer.from(c)), onStderr: (c) => err.push(Buffer.from(c)) },
    );
    if (r.exitCode !== 0) throw new Error(`setup failed (${r.exitCode}): ${Buffer.concat(err).toString()}`);
    return Buffer.concat(out).toString("utf8");
  }

  async function call(name: string, args: unknown): Promise<ToolOutput> {
    const tool = tools[name]!;
    const prepared = tool.prepareArguments ? tool.prepareArguments(args) : args;
    return tool.execute("call", prepared, { sandbox, spill: {} as SpillStore });
  }

  async function text(name: string, args: unknown): Promise<string> {
    const out = await call(name, args);
    return out.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  }

  async function failure(name: string, args: unknown): Promise<WardenError> {
    try {
      await call(name, args);
    } catch (err) {
      return err as WardenError;
    }
    throw new Error(`${name} ${JSON.stringify(args)} should have failed`);
  }

  const hex = async (path: string) => (await sh(`od -An -tx1 -v ${path} | tr -d ' \\n'`)).trim();

  beforeAll(async () => {
    sandbox = await createTestSandbox({ tenant });
    await sh("mkdir -p /tmp/secret && echo 'root secret' > /tmp/secret/leaked.txt");
    await sh(
      "ln -s /etc/passwd leak && ln -s /etc etcdir && ln -s /etc/warden-new dangle && ln -s /tmp tmplink",
    );
  });
  afterAll(async () => {
    await sandbox?.destroy();
    expect(await backendLeftovers(tenant)).toEqual([]);
  });

  it("case 1: write, edit, grep and find refuse symlinks leading outside, naming the target", async () => {
    const cases: [string, unknown, string][] = [
      ["write", { path: "leak", content: "x" }, "/etc/passwd"],
      ["write", { path: "etcdir/hostname", content: "x" }, "/etc/hostname"],
      ["write", { path: "dangle", content: "x" }, "/etc/warden-new"],
      ["write", { path: "tmplink/secret/leaked.txt", content: "x" }, "/tmp/secret/leaked.txt"],
      ["edit", { path: "leak", edits: [{ oldText: "root", newText: "toor" }] }, "/etc/passwd"],
      ["grep", { pattern: "root", path: "leak" }, "/etc/passwd"],
      ["grep", { pattern: "root", path: "etcdir" }, "/etc"],
      ["find", { pattern: "*", path: "etcdir" }, "/etc"],
    ];
    for (const [name, args, target] of cases) {
      const err = await failure(name, args);
      expect([name, err.code]).toEqual([name, "PATH_OUTSIDE_WORKSPACE"]);
      expect(err.message).toContain(`resolves to '${target}'`);
    }
    expect(await sh("cat /tmp/secret/leaked.txt")).toBe("root secret\n");
    expect(await sh("test -e /etc/warden-new && echo yes || echo no")).toBe("no\n");
  });

  it("case 1: grep and find in the workspace never return what the links point to", async () => {
    expect(await text("grep", { pattern: "root" })).toBe("No matches found");
    const listing = await text("find", { pattern: "*" });
    expect(listing).toBe(
      "No files found matching pattern\n\n[4 entries omitted: resolved outside the workspace]",
    );
  });

  it("case 2: sibling directories that share the prefix are refused", async () => {
    const evil = await failure("write", { path: "/workspace-evil/secret.txt", content: "x" });
    expect(evil.code).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(evil.message).toContain("'/workspace-evil/secret.txt'");
    const bak = await failure("edit", { path: "../workspace_bak/x", oldText: "a", newText: "b" });
    expect(bak.code).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(bak.message).toContain("'/workspace_bak/x'");
    expect((await failure("grep", { pattern: "x", path: "/workspace_bak" })).code).toBe(
      "PATH_OUTSIDE_WORKSPACE",
    );
    expect((await failure("find", { pattern: "*", path: "../workspace-evil" })).code).toBe(
      "PATH_OUTSIDE_WORKSPACE",
    );
  });

  it("case 4: find and grep patterns that climb out are rejected", async () => {
    for (const pattern of [
      "../secret/*",
      "{.,..}/secret/*",
      "/etc/*",
      "../tmp/secret/*",
      "{.,..}/tmp/secret/*",
    ]) {
      const err = await failure("find", { pattern });
      expect([pattern, err.code]).toEqual([pattern, "INVALID_ARGUMENT"]);
    }
    const grep = await failure("grep", { pattern: "root", path: "../../etc" });
    expect(grep.code).toBe("PATH_OUTSIDE_WORKSPACE");
    expect(grep.message).toContain("'/etc'");
    // A glob that names a parent cannot widen rg's walk: nothing outside comes back.
    expect(await text("grep", { pattern: "root", glob: "../tmp/secret/*" })).toBe("No matches found");
  });

  it("case 9: a CRLF file edited with LF text keeps CRLF", async () => {
    await sh("printf 'alpha\\r\\nbeta\\r\\ngamma\\r\\n' > c.txt");
    const out = await text("edit", { path: "c.txt", oldText: "alpha\nbeta", newText: "ALPHA\nBETA" });
    expect(out).toBe("Successfully replaced 1 block(s) in c.txt.");
    expect(await hex("c.txt")).toBe(Buffer.from("ALPHA\r\nBETA\r\ngamma\r\n").toString("hex"));
  });

  it("case 9: in a mixed-EOL file, untouched lines keep their endings", async () => {
    await sh("printf 'one\\r\\ntwo\\nthree\\r\\n' > m.txt");
    await call("edit", { path: "m.txt", edits: [{ oldText: "three", newText: "THREE" }] });
    expect(await hex("m.txt")).toBe(Buffer.from("one\r\ntwo\nTHREE\r\n").toString("hex"));
  });

  it("case 10: the BOM and UTF-8 bytes survive an edit", async () => {
    await sh("printf '\\xef\\xbb\\xbfhello\\nw\\xc3\\xb6rld\\n' > b.txt");
    await call("edit", { path: "b.txt", oldText: "hello\nw", newText: "hello2\nw" });
    expect(await hex("b.txt")).toBe(`efbbbf${Buffer.from("hello2\nw\u00f6rld\n").toString("hex")}`);
  });

  it("case 12: a tab edit succeeds; a spaces edit fails with the tabs hint", async () => {
    await sh("printf 'f() {\\n\\treturn 1\\n}\\n' > t.go");
    const err = await failure("edit", { path: "t.go", oldText: "    return 1", newText: "    return 2" });
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain("Could not find the exact text in t.go.");
    expect(err.message).toContain("the file indents with tabs, but your oldText uses spaces");
    expect(await sh("cat t.go")).toBe("f() {\n\treturn 1\n}\n");
    await call("edit", { path: "t.go", oldText: "\treturn 1", newText: "\treturn 2" });
    expect(await sh("cat t.go")).toBe("f() {\n\treturn 2\n}\n");
  });

  it("edit returns the display diff and unified patch", async () => {
    await sh("printf 'a\\nb\\nc\\n' > d.txt");
    const out = await call("edit", { path: "d.txt", edits: [{ oldText: "b", newText: "B" }] });
    expect(out.details).toEqual({
      diff: " 1 a\n-2 b\n+2 B\n 3 c",
      patch: "--- a/d.txt\n+++ b/d.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
      firstChangedLine: 2,
      fuzzyEdits: [],
    });
  });

  it("write creates parent directories and reports bytes", async () => {
    expect(await text("write", { path: "deep/a/b/c.txt", content: "h\u00e9llo\n" })).toBe(
      "Successfully wrote 7 bytes to deep/a/b/c.txt",
    );
    // find, not stat(1): coreutils' statx call fails with EINVAL under Debian's gVisor (test:k8s:gvisor).
    // The directories it made are the sandbox's own uid's (the one its info records).
    expect(await sh("cat deep/a/b/c.txt; find deep/a/b -maxdepth 0 -printf '%U\\n'")).toBe(
      `h\u00e9llo\n${sandbox.info.uid}\n`,
    );
    expect(await text("write", { path: "deep/a/b/c.txt", content: "" })).toBe(
      "Successfully wrote 0 bytes to deep/a/b/c.txt",
    );
    expect((await failure("write", { path: "deep", content: "x" })).code).toBe("INVALID_ARGUMENT");
  });

  it("grep output format, context, hidden files, .gitignore, long lines and limits", async () => {
    await sh(
      "mkdir -p g/sub && cd g && printf 'one\\nneedle 1\\nthree\\n' > a.txt && printf 'needle hidden\\n' > .h.txt" +
        " && printf 'ignored.txt\\n' > .gitignore && printf 'needle ignored\\n' > ignored.txt" +
        " && printf 'needle %0600d\\n' 0 > sub/long.txt",
    );
    expect(await text("grep", { pattern: "needle", path: "g" })).toBe(
      [
        ".h.txt:1: needle hidden",
        "a.txt:2: needle 1",
        `sub/long.txt:1: needle ${"0".repeat(493)}... [truncated]`,
        "",
        "[Some lines truncated to 500 chars. Use read tool to see full lines]",
      ].join("\n"),
    );
    expect(await text("grep", { pattern: "NEEDLE 1", path: "g/a.txt", ignoreCase: true, context: 1 })).toBe(
      "a.txt-1- one\na.txt:2: needle 1\na.txt-3- three",
    );
    expect(await text("grep", { pattern: "needle", path: "g", glob: "sub/*", limit: 1, literal: true })).toBe(
      `sub/long.txt:1: needle ${"0".repeat(493)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`,
    );
    expect(await text("grep", { pattern: "needle", path: "g", limit: 1, literal: true })).toBe(
      ".h.txt:1: needle hidden\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
    );
    // As in ripgrep (and Pi), an explicit glob overrides .gitignore.
    expect(await text("grep", { pattern: "needle", path: "g", glob: "ignored.*" })).toBe(
      "ignored.txt:1: needle ignored",
    );
  });

  it("grep never searches .git, whatever the glob (attack-38b F2: `**` printed .git/config's token)", async () => {
    await sh(
      "mkdir -p gg/.git && printf 'needle token\\n' > gg/.git/config && printf 'needle a\\n' > gg/a.txt",
    );
    const found = "a.txt:1: needle a";
    for (const [glob, want] of [
      ["**", found],
      ["*", found],
      ["{.git,config}", "No matches found"],
      [".git/*", "No matches found"],
    ])
      expect([glob, await text("grep", { pattern: "needle", path: "gg", glob })]).toEqual([glob, want]);
  });

  it("grep stops ripgrep at the match limit and returns exactly the limit", async () => {
    await sh("mkdir -p huge && seq 1 200000 | sed 's/^/match /' > huge/n.txt");
    const out = await text("grep", { pattern: "match", path: "huge", limit: 3 });
    expect(out).toBe(
      "n.txt:1: match 1\nn.txt:2: match 2\nn.txt:3: match 3\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]",
    );
    expect(await sh("sleep 0.5; pgrep -cx rg || true")).toBe("0\n");
  });

  it("grep stops at the 50 KiB cap", async () => {
    await sh("mkdir -p big && for i in $(seq 1 600); do printf 'hit %0100d\\n' $i; done > big/many.txt");
    const out = await text("grep", { pattern: "hit", path: "big", limit: 1000 });
    const lines = out.split("\n");
    expect(lines.at(-1)).toBe("[50.0KB limit reached]");
    expect(Buffer.byteLength(out.slice(0, out.indexOf("\n\n[")))).toBeLessThanOrEqual(51_200);
    expect(lines[0]).toBe(`many.txt:1: hit ${"0".repeat(99)}1`);
  });

  it("find output format: relative paths, dirs with '/', hidden files, root .gitignore", async () => {
    await sh(
      "mkdir -p f/src/lib f/nm && cd f && touch src/a.ts src/lib/b.ts .env nm/x.ts && printf 'nm/\\n' > .gitignore",
    );
    expect((await text("find", { pattern: "*", path: "f" })).split("\n").sort()).toEqual(
      [".env", ".gitignore", "src/", "src/a.ts", "src/lib/", "src/lib/b.ts"].sort(),
    );
    expect(await text("find", { pattern: "*.ts", path: "f" })).toMatch(
      /^(src\/a\.ts\nsrc\/lib\/b\.ts|src\/lib\/b\.ts\nsrc\/a\.ts)$/,
    );
    expect(await text("find", { pattern: "src/lib/*.ts", path: "f" })).toBe("src/lib/b.ts");
    expect(await text("find", { pattern: "*.nope", path: "f" })).toBe("No files found matching pattern");
    const limited = await text("find", { pattern: "*.ts", path: "f", limit: 1 });
    expect(limited).toMatch(/\n\n\[1 results limit reached\. Use limit=2 for more, or refine pattern\]$/);
  });

  it("find: files under a parent .gitignore are still found (earendil-works/pi#5960)", async () => {
    await sh(
      "mkdir -p repo/pkg && cd repo && git init -q && printf '*.gen.ts\\n' > .gitignore && touch pkg/x.gen.ts pkg/y.ts",
    );
    expect(await text("find", { pattern: "*.ts", path: "repo" })).toBe("pkg/y.ts");
    expect((await text("find", { pattern: "*.ts", path: "repo/pkg" })).split("\n").sort()).toEqual([
      "x.gen.ts",
      "y.ts",
    ]);
  });

  it("find: a .gitignore nested outside a git repository applies, as in Pi 0.73.1 (found by test/pi)", async () => {
    await sh(
      "mkdir -p plainfind/sub && cd plainfind && printf 'top.log\\n' > .gitignore && printf 'deeper.txt\\n' > sub/.gitignore" +
        " && touch top.log kept.txt sub/deeper.txt sub/visible.txt",
    );
    expect(await text("find", { pattern: "*.txt", path: "plainfind" })).toBe("kept.txt\nsub/visible.txt");
    expect(await text("find", { pattern: "*.log", path: "plainfind" })).toBe(
      "No files found matching pattern",
    );
  });
});
