/**
 * attack-37 F4, decided as a known limit: git commands that print the diffs or contents of
 * committed files without naming a path (`git log -p`, `git show`, `git diff A B`) stay allowed by
 * the default, readonly and ci policies (they are among the most common commands an agent runs, and
 * path rules cannot see which files a commit touched); forms that read a whole tree by object name
 * (`git grep PATTERN REV`) read any path (commands/git-revisions.ts). policies/strict.yaml asks for the
 * history-printing forms with a reason that says so (rule ask-git-history).
 */
import { describe, expect, it } from "vitest";
import { shippedPolicies } from "../../helpers/policy.js";

const shipped = shippedPolicies("default", "readonly", "ci", "strict");
const decisions = (command: string) => shipped.each(command, (d) => `${d.decision} ${d.ruleId ?? "-"}`);

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
    const d = await shipped.decide("strict", "git log -p");
    expect(d.reason).toBe(
      "git may print the content of committed files (log -p, show, diff REV), a committed secret too; path rules do not see them",
    );
  });
});
