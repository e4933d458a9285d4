/**
 * The relative links of README.md, docs/*.md and AGENTS.md reach a file of the repository, and a
 * link's `#anchor` a heading of its markdown target (GitHub's slugs: lower case, punctuation
 * dropped, spaces as hyphens). Links inside code blocks are not links.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, REPO_ROOT } from "../../helpers/doc-snippets.js";

/** GitHub's anchor of a heading's text. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The text outside fenced blocks. */
function prose(text: string): string {
  return text.replace(/^(\s*)(`{3,}|~{3,})[\s\S]*?^\1\2\s*$/gm, "");
}

function anchorsOf(file: string): Set<string> {
  const text = prose(readFileSync(join(REPO_ROOT, file), "utf8"));
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1] ?? "")));
}

describe("documentation links", () => {
  it("every relative link names an existing file, and its anchor a heading there", () => {
    const broken: string[] = [];
    for (const file of [...docFiles(), "AGENTS.md", "CHANGELOG.md"]) {
      const text = prose(readFileSync(join(REPO_ROOT, file), "utf8"));
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1] ?? "";
        if (/^[a-z]+:/.test(link)) continue;
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? file : normalize(join(dirname(file), path));
        if (!existsSync(join(REPO_ROOT, target))) {
          broken.push(`${file}: ${link} (no ${target})`);
          continue;
        }
        if (anchor && target.endsWith(".md") && !anchorsOf(target).has(anchor)) {
          broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("slugs headings as GitHub does", () => {
    expect(slug("`warden exec`: one tool call")).toBe("warden-exec-one-tool-call");
    expect(slug("Channel socket (Docker)")).toBe("channel-socket-docker");
  });
});
