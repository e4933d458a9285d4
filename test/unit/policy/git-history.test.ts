/**
 * attack-37 F4, decided as a known limit: git commands that print the diffs or contents of
 * committed files without naming a path (`git log -p`, `git show`, `git diff A B`) stay allowed by
 * the default, readonly and ci policies (they are among the most common commands an agent runs, and
 * path rules cannot see which files a commit touched); forms that read a whole tree by object name
 * (`git grep PATTERN REV`) read any path (git-revisions.ts). policies/strict.yaml asks for the
 * history-printing forms with a reason that says so (rule ask-git-history).
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  evaluate,
  lexicalContext,
  loadBashParser,
  loadPolicy,
  type Policy,
} from "../../../src/policy/index.js";

const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
const NAMES = ["default", "readonly", "ci", "strict"] as const;
let policies: Record<(typeof NAMES)[number], Policy>;

beforeAll(async () => {
  await loadBashParser();
  const entries = await Promise.all(NAMES.map(async (n) => [n, await loadPolicy([shipped(n)])] as const));
  policies = Object.fromEntries(entries) as typeof policies;
});

const decisions = async (command: string) => {
  const out: Record<string, string> = {};
  for (const name of NAMES) {
    const d = await evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);
    out[name] = `${d.decision} ${d.ruleId ?? "-"}`;
  }
  return out;
};

describe("committed secrets through git history (F4): the known limit, exactly", () => {
  it.each(["git log -p", "git show", "git show HEAD", "git diff HEAD~1 HEAD", "git log -p --stdin"])(
    "%s: allowed by default, readonly and ci (known limit); asked by strict's ask-git-history",
    async (command) => {
      expect(await decisions(command)).toEqual({
        default: "allow allow-read-only-commands",
        readonly: "allow allow-read-only-commands",
        ci: "allow allow-read-only-commands",
        strict: "ask ask-git-history",
      });
    },
  );

  it("git grep PATTERN REV reads every file of the tree: default and readonly ask, ci denies", async () => {
    expect(await decisions("git grep -h SECRET HEAD")).toEqual({
      default: "ask default",
      readonly: "ask default",
      ci: "deny default",
      strict: "ask ask-bash",
    });
  });

  it("strict's reason says what the approver cannot see", async () => {
    const d = await evaluate(
      policies.strict,
      { tool: "bash", args: { command: "git log -p" } },
      lexicalContext,
    );
    expect(d.reason).toBe(
      "git may print the content of committed files (log -p, show, diff REV), a committed secret too; path rules do not see them",
    );
  });
});
