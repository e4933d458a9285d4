/**
 * attack-38b F1: a backslash-newline inside a word. bash removes the pair before it splits words
 * (`cat .e\` newline `nv` runs `cat .env`); tree-sitter-bash took it for whitespace and judged two
 * words, `.e` and `nv`, so the command was allowed. The analysis now parses the text bash
 * tokenises (bash/continuations.ts). Exact decisions under default, readonly and ci; where bash
 * keeps the pair (single quotes, `$'…'`, a comment, after `\\`) nothing changes.
 */
import { describe, expect, it } from "vitest";
import { joinContinuations } from "../../../src/policy/bash/continuations.js";
import { loadBashParser } from "../../../src/policy/index.js";
import { decisionRulePart, shippedPolicies } from "../../helpers/policy.js";

const NAMES = ["default", "readonly", "ci"] as const;
const shipped = shippedPolicies(...NAMES);
const decide = async (name: (typeof NAMES)[number], command: string) =>
  decisionRulePart(await shipped.decide(name, command));

describe("a backslash-newline joins words as bash joins them (F1)", () => {
  it.each([
    ["cat .e\\\nnv", "/workspace/.env"],
    ["cat .git/con\\\nfig", "/workspace/.git/config"],
    ["cat .gi\\\nt/config", "/workspace/.git/config"],
    ["cat .e\\\n\\\nnv", "/workspace/.env"],
    ["echo $(cat .e\\\nnv)", "/workspace/.env"],
    ["echo `cat .e\\\nnv`", "/workspace/.env"],
    ["bash -c 'cat .e\\\nnv'", "/workspace/.env"],
    ["git show HEAD:.e\\\nnv", "/workspace/.env"],
    ["echo '\\\n'; cat .e\\\nnv", "/workspace/.env"],
    ["cat <<'E'\nx\\\nE\ncat .e\\\nnv\nE", "/workspace/.env"],
  ])("%j reads %s: denied by deny-secrets under default, readonly and ci", async (command, path) => {
    for (const name of NAMES)
      expect([name, ...(await decide(name, command))]).toEqual([name, "deny", "deny-secrets", path]);
  });

  it("a write through a joined redirection target is the write of that file", async () => {
    const command = 'printf "[core]\\n" >> .gi\\\nt/config';
    for (const name of NAMES)
      expect([name, ...(await decide(name, command))]).toEqual([
        name,
        "deny",
        "deny-secrets",
        "/workspace/.git/config",
      ]);
  });

  it("a joined command name is that command: r\\<newline>m -rf src is rm", async () => {
    expect(await decide("default", "r\\\nm -rf src")).toEqual(["deny", "deny-rm", "rm -rf src"]);
    // Found by a differential run against bash 5.2: a pair at the start of a line was allowed.
    expect(await decide("default", "echo a\n\\\nrm -rf src")).toEqual(["deny", "deny-rm", "rm -rf src"]);
  });

  it("ordinary continuations after a blank stay allowed", async () => {
    expect(await decide("default", "git status \\\n  --short")).toEqual([
      "allow",
      "allow-read-only-commands",
      "git status --short",
    ]);
    expect((await decide("readonly", "grep -rn \\\n  TODO src"))[0]).toBe("allow");
  });

  it("keeps the pair where bash keeps it: single quotes, $'…', a comment, after an escaped backslash", async () => {
    await loadBashParser();
    for (const text of ["echo 'a\\\nb'", "echo $'a\\\nb'", "# a \\\necho b", "echo a\\\\\nb"])
      expect(joinContinuations(text)).toEqual({ text });
    expect(joinContinuations('echo "a\\\nb" c\\\nd')).toEqual({ text: 'echo "ab" cd' });
    // A join that turns a comment into a word is parsed again: `a#b` is a word, so the next pair joins too.
    expect(joinContinuations("echo a\\\n#b \\\ncat x")).toEqual({ text: "echo a#b cat x" });
  });
});
