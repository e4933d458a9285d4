/**
 * Every fenced block of README.md and docs/*.md is executed by a test or says why not: it carries a
 * `snippet` or `output` mark whose name some test loads with `docSnippet(file, name)` (TypeScript)
 * or `doc_snippet(file, name)` (clients/python's pytest), or a `not-run` mark with a reason.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type DocBlock, docBlocks, docFiles, REPO_ROOT } from "../../helpers/doc-snippets.js";

/** `file#name` of every docSnippet / doc_snippet call in the test sources. */
function loadedSnippets(): Set<string> {
  const roots = ["test", "clients/python/tests"];
  const loaded = new Set<string>();
  for (const root of roots) {
    for (const name of readdirSync(join(REPO_ROOT, root), { recursive: true }) as string[]) {
      if (!/\.(ts|py)$/.test(name)) continue;
      const text = readFileSync(join(REPO_ROOT, root, name), "utf8");
      for (const m of text.matchAll(/doc_?[sS]nippet\(\s*"([^"]+)",\s*"([^"]+)"/g)) {
        loaded.add(`${m[1]}#${m[2]}`);
      }
    }
  }
  return loaded;
}

const where = (b: DocBlock) => `${b.file}:${b.line}`;

describe("the documentation's code blocks", () => {
  const blocks = docFiles().flatMap(docBlocks);
  const loaded = loadedSnippets();

  it("README.md and docs/*.md have blocks to check", () => {
    expect(blocks.length).toBeGreaterThan(10);
  });

  it("every block is marked snippet, output or not-run (the comment right before it)", () => {
    const unmarked = blocks
      .filter((b) => b.mark.kind === "none" || b.mark.kind === "invalid")
      .map((b) => `${where(b)} ${b.mark.kind === "invalid" ? `bad mark ${b.mark.text}` : "no mark"}`);
    expect(unmarked).toEqual([]);
  });

  it("every not-run mark gives a reason", () => {
    const empty = blocks.filter((b) => b.mark.kind === "not-run" && b.mark.reason.length < 10).map(where);
    expect(empty).toEqual([]);
  });

  it("names are unique within a file", () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const b of blocks) {
      if (b.mark.kind !== "snippet" && b.mark.kind !== "output") continue;
      const key = `${b.file}#${b.mark.name}`;
      if (seen.has(key)) twice.push(`${key} at ${seen.get(key)} and ${where(b)}`);
      seen.set(key, where(b));
    }
    expect(twice).toEqual([]);
  });

  it("every named block is loaded by a test (docSnippet / doc_snippet with its file and name)", () => {
    const unloaded = blocks
      .filter(
        (b) =>
          (b.mark.kind === "snippet" || b.mark.kind === "output") && !loaded.has(`${b.file}#${b.mark.name}`),
      )
      .map((b) => `${where(b)} ${b.mark.kind === "snippet" || b.mark.kind === "output" ? b.mark.name : ""}`);
    expect(unloaded).toEqual([]);
  });

  it("every name a test loads exists", () => {
    const named = new Set(
      blocks.flatMap((b) =>
        b.mark.kind === "snippet" || b.mark.kind === "output" ? [`${b.file}#${b.mark.name}`] : [],
      ),
    );
    expect([...loaded].filter((k) => !named.has(k))).toEqual([]);
  });
});

describe("README.md", () => {
  it("stays a front door: at most 440 lines (the reference goes to docs/)", () => {
    const lines = readFileSync(join(REPO_ROOT, "README.md"), "utf8").split("\n").length - 1;
    expect(lines).toBeLessThanOrEqual(440);
  });
});

describe("docBlocks", () => {
  it("reads a block's text, language and mark", () => {
    const readme = docBlocks("README.md");
    const demo = readme.find((b) => b.mark.kind === "snippet" && b.mark.name === "quickstart-demo");
    expect(demo).toMatchObject({ lang: "sh", text: "npm run demo\n" });
  });
});
