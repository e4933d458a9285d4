/**
 * Issue 37 item 11: the exact decisions for the finding's ordinary commands under the shipped
 * policies, and the reason for an expanded argument shown as the script writes it (it showed the
 * internal placeholder `\x01`). Each refusal nearby stays (a listing that names a secret asks).
 */
import { expect, it } from "vitest";
import { shippedPolicies } from "../../helpers/policy.js";

const { decide } = shippedPolicies("default", "readonly");

it.each([
  ["readonly", 'for f in src/*.ts; do wc -l "$f"; done'],
  ["readonly", "diff <(sort a) <(sort b)"],
  ["default", "paste a.txt b.txt"],
  ["default", "sed -n '1,40p' src/index.ts"],
  ["default", "sleep 5 && echo done"],
  // `git -C DIR` is judged as git started in DIR (git(1)): its subcommand, and its paths below DIR.
  ["default", "git -C packages/tui log --oneline -3"],
  ["readonly", "git -C packages/tui diff --stat"],
] as const)("under %s %s is allowed", async (name, command) => {
  expect((await decide(name, command)).decision).toBe("allow");
});

it.each([
  ["default", "find . -name '.e*' -print0 | xargs -0 cat", "ask"],
  ["default", "cat $(find . -name '*.pem')", "deny"],
  ["default", 'for f in .env x; do cat "$f"; done', "deny"],
  ["default", 'f=.env; for g in a; do cat "$f"; done', "ask"],
  ["default", 'for f in a.ts; do f=.env; cat "$f"; done', "ask"],
  ["default", "printf '.env\\n' | xargs cat", "ask"],
  ["default", "sed 's/x/y/e' notes.txt", "ask"],
  ["default", "sed -n '1r .env' notes.txt", "ask"],
  ["readonly", "find .ssh -name '*.pub' -print0 | xargs -0 cat", "deny"],
  ["readonly", "git -C sub -c core.pager=sh log", "deny"],
  ["readonly", 'git -C "$D" log', "deny"],
  // HEAD:.env is read from the repository's top, sub or the workspace (commands/git-revisions.ts): both
  // literal paths, which deny-secrets denies as it does `cat .env`.
  ["default", "git -C sub show HEAD:.env", "deny"],
  ["default", "git -C sub push", "ask"],
  // find's `-name` and git's pathspec match a leading dot with `*` (fnmatch without FNM_PERIOD):
  // `*.log` and `*.ts` name `.env.log` and `.env.ts`, which deny-secrets' `**/.env.*` covers.
  ["readonly", "find . -name '*.log' -print0 | xargs -0 grep -l ERROR", "ask"],
  ["default", "git ls-files '*.ts' | xargs wc -l", "ask"],
  ["default", "wc -l $(git ls-files '*.ts')", "ask"],
] as const)("under %s %s stays refused (%s)", async (name, command, decision) => {
  expect((await decide(name, command)).decision).toBe(decision);
});

it("an expanded argument's reason shows the word as written, never the internal placeholder", async () => {
  const d = await decide("default", "cat $(git diff --name-only)");
  expect(d.decision).toBe("ask");
  expect(d.part).toBe("$(git diff --name-only) (may name …)");
  expect(d.part).not.toContain("\u0001");
  expect(d.reason).toMatch(/^may expand to a path that rule 'deny-secrets' denies/);
});
