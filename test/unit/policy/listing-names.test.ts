/**
 * A listing's name filter matches names as its tool does (issue 37, listings fed to a command):
 * find's `-name` / `-iname` and grep's `--include` use fnmatch(3) without FNM_PERIOD, so `*.local`
 * names `.env.local`, and find and `grep -r` walk into dot directories (`-name config` finds
 * `.git/config`); rg lists a dot file its `-g` glob names; fd and rg skip dot files and dot
 * directories unless `-H` / `--hidden` / `-u`. Checked in warden-sandbox (find 4.9, grep 3.8,
 * rg 13, fd 10). The paths a listing may print, at any depth, meet every path rule.
 */
import { expect, it } from "vitest";
import { shippedPolicies } from "../../helpers/policy.js";

const { decide } = shippedPolicies("default", "readonly");

// A path a rule may deny asks (readonly's callers without an approver refuse it).
it.each([
  ["find src -name '*.ts' | xargs wc -l", "deny-secrets"], // `*.ts` names `.env.ts`, a `.env.*` file
  ["git ls-files '*.md' | xargs wc -l", "deny-secrets"], // git's `*` matches a leading dot too
  ["grep -rl --include='*.ts' TODO . | xargs wc -l", "deny-secrets"],
  ["find . -name '*.local' -print0 | xargs -0 cat", "deny-secrets"],
  ["find . -iname '*.LOCAL' | xargs cat", "deny-secrets"],
  ["cat $(find src -name '*.local')", "deny-secrets"],
  ["find . -name config | xargs cat", "deny-secrets"],
  ["find . -name known_hosts | xargs cat", "deny-secrets"], // find walks into any `.ssh/`
  ["find src -name index.ts | xargs head -5", "deny-secrets"], // `src/.ssh/index.ts` too
  ["find . -type f -name 'config*' -print0 | xargs -0 head", "deny-secrets"],
  ["grep -rl --include='*.local' '' . | xargs cat", "deny-secrets"],
  ["grep -rl --include=config url . | xargs cat", "deny-secrets"],
  ["rg --files -g '*.local' | xargs cat", "deny-secrets"],
  ["rg -l -g '*.local' KEY | xargs cat", "deny-secrets"],
  ["fd -H -e local | xargs cat", "deny-secrets"],
  ["fd -H config | xargs cat", "deny-secrets"],
  ["rg --files --hidden | xargs cat", "deny-secrets"],
])("%s is refused: it may read a secret (%s)", async (command, rule) => {
  const d = await decide("default", command);
  expect(d.decision).toBe("ask");
  expect(d.reason).toContain(`rule '${rule}'`);
  const r = await decide("readonly", command);
  expect(r.decision).toBe("ask");
  expect(r.reason).toContain(`rule '${rule}'`);
});

// fd and rg skip dot files and dot directories unless told: these lists never hold a secret when
// their names reach the command whole (xargs -0, a quoted "$(…)").
it.each([
  "fd -0 -e local | xargs -0 cat",
  "fd -0 -g config | xargs -0 cat",
  "fd -0 -g known_hosts | xargs -0 cat",
  "fd -0 -e ts | xargs -0 wc -l",
  'wc -l "$(fd -e ts . src)"',
])("%s is allowed under default and readonly", async (command) => {
  expect((await decide("default", command)).decision).toBe("allow");
  expect((await decide("readonly", command)).decision).toBe("allow");
});

// Without -0 xargs splits a name at blanks and reads quotes, and bash splits an unquoted $(…):
// `x .env.local` gives `.env.local`, so a piece may be any path (a live session judges the names
// there are: live-paths.test.ts).
it.each([
  "fd -e local | xargs cat",
  "fd -g config | xargs cat",
  "fd -g known_hosts | xargs cat",
  "fd -e ts | xargs wc -l",
  "wc -l $(fd -e ts . src)",
])("%s asks under default and readonly: a name may be split", async (command) => {
  expect((await decide("default", command)).decision).toBe("ask");
  expect((await decide("readonly", command)).decision).toBe("ask");
});
