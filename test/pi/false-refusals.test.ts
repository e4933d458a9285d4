/**
 * Issue 13's false-refusal corpus: the distinct bash commands of the real recorded Pi session
 * (corpus-session.ts, ../shared/fixtures/pi-large-session.jsonl beside the repository, never
 * committed) under the shipped default policy. It runs in `npm run test:pi` only, since a clone
 * has no ../shared; there it fails, naming the path, when the session is missing. README
 * "Policies" prints its figure. No engine: policy evaluation is pure.
 */
import { beforeAll, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../src/policy/index.js";
import { sessionBashCommands } from "./corpus-session.js";

/** Commands of the session auto-allowed under default (README "Policies" prints this figure). */
const ALLOWED_FIGURE = 121;

let policy: Policy;
beforeAll(async () => {
  policy = await loadPolicy([new URL("../../policies/default.yaml", import.meta.url).pathname]);
});

it("under default, every read, search, build and test command of a real Pi session runs; only writes, deletes, publishing and unknown programs are refused", async () => {
  const commands = sessionBashCommands();
  expect(commands.length).toBeGreaterThanOrEqual(150);
  const refused: string[] = [];
  for (const command of commands) {
    const d = await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext);
    if (d.decision !== "allow") refused.push(command);
  }
  // Each refused command writes outside the workspace tools, deletes, edits in place, commits,
  // publishes, installs or runs a program the policy does not name (see README "Policies").
  for (const command of refused)
    expect(command).toMatch(
      /sed -i|\brm\b|mkdir|\bcp\b|\bcode\b|git (add|commit|tag|push)|npm (run (version|publish)|install)|\/tmp\/fix|sleep|awk|tsgo/,
    );
  expect(commands.length - refused.length).toBe(ALLOWED_FIGURE);
});
