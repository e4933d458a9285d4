/**
 * attack-38b F2: the grep tool's `glob`. ripgrep's `--glob` overrides .gitignore (as in Pi), so
 * `glob: "*"` searched a `.env` that a search of the directory skips, and the policy judged only the
 * search path. The glob is now judged as the names it gives below the search path
 * (src/policy/search-glob.ts). The same for bash's `rg -g` / `--glob` / `--iglob`, whose glob
 * overrides .gitignore and the hidden-file rule (`rg -g '**' url` printed .git/config's token under
 * readonly). Exact decisions under default, readonly and ci.
 */
import { describe, expect, it } from "vitest";
import { evaluate, lexicalContext } from "../../../src/policy/index.js";
import { searchGlobs } from "../../../src/policy/search-glob.js";
import { shippedPolicies } from "../../helpers/policy.js";

const NAMES = ["default", "readonly", "ci"] as const;
const shipped = shippedPolicies(...NAMES);

async function decisions(args: Record<string, unknown>): Promise<string[]> {
  const out: string[] = [];
  for (const name of NAMES) {
    const d = await evaluate(await shipped.policy(name), { tool: "grep", args }, lexicalContext);
    out.push(`${name}:${d.decision}`);
  }
  return out;
}

const REFUSED = ["default:ask", "readonly:ask", "ci:deny"];
const ALLOWED = ["default:allow", "readonly:allow", "ci:allow"];

describe("the grep tool's glob meets path rules (F2)", () => {
  it.each([
    ".env",
    "*",
    "**",
    "**/.env",
    "*env",
    "?env",
    ".e*",
    "{.env,x}",
    "src/**",
    "{.git,config}",
    "*.pem",
    "id_*",
    ".ssh/*",
  ])("glob %j may name a secret: default and readonly ask, ci denies", async (glob) => {
    expect(await decisions({ pattern: "KEY", glob })).toEqual(REFUSED);
  });

  it("the reason names the glob and the rule", async () => {
    const d = await evaluate(
      await shipped.policy("default"),
      { tool: "grep", args: { pattern: "KEY", glob: "*" } },
      lexicalContext,
    );
    expect([d.decision, d.part]).toEqual(["ask", "/workspace/*"]);
    expect(d.reason).toMatch(
      /^the grep tool's glob selects the files it searches, ignored ones too; it may expand to a path that rule 'deny-secrets' denies/,
    );
  });

  it.each(["*.ts", "**/*.ts", "src/**/*.{ts,tsx}", "*.{ts,md}", "**/*.test.ts", "!*.ts", "config", ""])(
    "glob %j names no secret: allowed everywhere",
    async (glob) => {
      expect(await decisions({ pattern: "TODO", glob })).toEqual(ALLOWED);
    },
  );

  it("a glob is judged below the search path", async () => {
    expect(await decisions({ pattern: "x", path: "docs", glob: "*.md" })).toEqual(ALLOWED);
    expect(searchGlobs("/workspace/docs", "*.md")).toEqual(["/workspace/docs/*.md"]);
    // A name starting with a dot may be a hidden directory the glob opens: what is below it too.
    const below = (word: string) => [word, `${word}/\u0001`];
    expect(searchGlobs("/workspace", "**/.env")).toEqual(below("/workspace/.env"));
    expect(searchGlobs("/workspace", "*env")).toEqual(["/workspace/*env", ...below("/workspace/.*env")]);
    expect(searchGlobs("/workspace", "src/**")).toEqual(["/workspace/src/*", ...below("/workspace/src/.*")]);
  });
});

describe("rg's -g / --glob / --iglob meet path rules like the grep tool's glob (F2, bash)", () => {
  it.each([
    "rg -g '*' API",
    "rg -g '**' url",
    "rg --hidden -g '**' url",
    "rg -g '{.git,config}' url",
    "rg --glob='*env' API",
    "rg --iglob .ENV API",
    "rg --glob-case-insensitive -g .ENV API",
  ])("%s: default and readonly ask, ci denies", async (command) => {
    expect(await shipped.letters(command)).toBe("??d");
  });

  it.each([
    "rg -g '*.ts' TODO",
    "rg -g '!*.lock' TODO src",
    "rg --glob='src/**/*.ts' TODO",
    "rg -g config url",
  ])("%s: allowed everywhere", async (command) => {
    expect(await shipped.letters(command)).toBe("AAA");
  });
});
