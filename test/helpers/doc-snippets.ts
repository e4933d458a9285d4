/**
 * The fenced blocks of README.md and docs/*.md, read from the markdown at test time so a test runs
 * the text a reader sees, never a copy of it. Each block carries a mark in the HTML comment on the
 * line right before it (blank lines between them are allowed):
 * - `<!-- snippet: NAME -->`: a command or code a test executes, loaded with `docSnippet(file, NAME)`;
 * - `<!-- output: NAME -->`: text a test compares with the real output, loaded the same way;
 * - `<!-- not-run: REASON -->`: not executed, with the reason (never empty).
 * test/unit/docs/snippets.test.ts checks every block has a mark and every name is loaded by a test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The repository root. */
export const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** One mark before a block. */
export type DocMark =
  | { kind: "snippet" | "output"; name: string }
  | { kind: "not-run"; reason: string }
  | { kind: "none" }
  | { kind: "invalid"; text: string };

/** One fenced block of a markdown file. */
export interface DocBlock {
  /** Path relative to the repository root, e.g. `docs/cli.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string after the fence (`sh`, `ts`, …), "" when none. */
  lang: string;
  /** The block's text, ending in a newline. */
  text: string;
  mark: DocMark;
}

/** The documentation files whose blocks are checked: README.md and every docs/*.md. */
export function docFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

const MARK = /^<!--\s*(snippet|output|not-run):(.*?)-->\s*$/;

function markOf(previous: string | undefined): DocMark {
  if (previous === undefined || !previous.trim().startsWith("<!--")) return { kind: "none" };
  const m = MARK.exec(previous.trim());
  if (!m) return { kind: "invalid", text: previous.trim() };
  const value = (m[2] ?? "").trim();
  if (m[1] === "not-run") return { kind: "not-run", reason: value };
  if (!/^[a-z0-9][a-z0-9-]*$/.test(value)) return { kind: "invalid", text: previous.trim() };
  return { kind: m[1] as "snippet" | "output", name: value };
}

/** Parses the fenced blocks (``` or ~~~, at any indentation) of `file`, relative to the repository. */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i] ?? "");
    if (!open) continue;
    const [, indent = "", fence = "", info = ""] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? "").trim().startsWith(fence)) end++;
    let previous = i - 1;
    while (previous >= 0 && (lines[previous] ?? "").trim() === "") previous--;
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
    blocks.push({
      file,
      line: i + 1,
      lang: info.trim().split(/\s+/)[0] ?? "",
      text: body.length > 0 ? `${body.join("\n")}\n` : "",
      mark: markOf(previous >= 0 ? lines[previous] : undefined),
    });
    i = end;
  }
  return blocks;
}

/**
 * The text of the block named `name` (a `snippet` or an `output` mark) in `file` (`README.md`,
 * `docs/cli.md`). Throws when there is none or more than one, naming the file.
 */
export function docSnippet(file: string, name: string): string {
  const found = docBlocks(file).filter(
    (b) => (b.mark.kind === "snippet" || b.mark.kind === "output") && b.mark.name === name,
  );
  if (found.length !== 1) {
    throw new Error(`${file} has ${found.length} blocks marked '${name}' (want exactly one)`);
  }
  return found[0]!.text;
}
