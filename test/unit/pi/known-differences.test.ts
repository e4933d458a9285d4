/**
 * The Pi fidelity suite's comparer (test/pi/compare.ts) on results recorded from real runs: a
 * difference it cannot explain fails `npm run test:pi`, so a wrong rule there is a flaky suite.
 */
import { describe, expect, it } from "vitest";
import { explain } from "../../pi/compare.js";

const grep = { id: "g74-2-mix-grep", name: "grep", arguments: { pattern: "^#", path: ".", limit: 5 } };
const result = (text: string) => ({
  toolCallId: grep.id,
  toolName: "grep",
  isError: false,
  content: [{ type: "text" as const, text }],
});
const hook = (n: number) => `repo/.git/hooks/pre-rebase.sample:${n}: #`;
const piLimit = "\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]";

describe("git-dir-skipped: Pi's grep limit filled in .git/", () => {
  // Pi's ripgrep walks in parallel without --sort: which five matches fill its limit varies by run.
  // Recorded in CI at 295e587 (all five in .git/) and on this machine (README.md first).
  const warden = "README.md:1: # Fixture";

  it("explains a run where all five of Pi's matches were in .git/", () => {
    const pi = [1, 2, 3, 4, 5].map(hook).join("\n") + piLimit;
    expect(explain(grep, result(pi), result(warden), pi, warden)).toEqual(["git-dir-skipped"]);
  });

  it("explains a run where Pi found README.md first", () => {
    const pi = [warden, ...[1, 2, 3, 4].map(hook)].join("\n") + piLimit;
    expect(explain(grep, result(pi), result(warden), pi, warden)).toEqual(["git-dir-skipped"]);
  });

  it("does not explain a match outside .git/ that warden lacks", () => {
    const pi = ["docs/guide.md:1: # Guide", ...[1, 2, 3, 4].map(hook)].join("\n") + piLimit;
    expect(explain(grep, result(pi), result(warden), pi, warden)).toBeUndefined();
  });
});
