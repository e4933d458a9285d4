/**
 * Issue 13, item 6: the bypass corpus (test/fixtures/bypass-corpus-issue13.ts, 500+ commands by
 * class) against the four shipped policies, and the false-refusal corpus: the bash commands of a
 * real recorded Pi session (../shared/fixtures/pi-large-session.jsonl, read at test time; never
 * copied into the repository). README "Policies" prints both figures.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";
import { issue13Corpus } from "../../fixtures/bypass-corpus-issue13.js";

const NAMES = ["default", "ci", "readonly", "strict"] as const;
type Name = (typeof NAMES)[number] | "model";
const policies = {} as Record<Name, Policy>;
beforeAll(async () => {
  for (const name of NAMES)
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
  policies.model = await loadPolicy([
    new URL("../../fixtures/bypass-corpus-model-policy.yaml", import.meta.url).pathname,
  ]);
});

const decide = async (name: Name, command: string) =>
  evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);

const corpus = issue13Corpus();

describe("issue 13 bypass corpus", () => {
  it("holds at least 500 commands over every class of the issue", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(500);
    expect(new Set(corpus.map((c) => c.technique))).toEqual(
      new Set([
        "nested substitution",
        "code from a variable's value",
        "environment without an assignment word",
        "option spellings",
        "build tools running inline code",
        "opaque words",
        "secret globs and expansions",
        "git branch writes",
        "writing forms of read-only commands",
        "code run by allowed commands",
        "writing forms of allowed commands",
        "secret paths the command model resolves",
      ]),
    );
  });

  it.each(corpus.map((c) => [c.technique, c.command]))(
    "%s: %j is refused: not allowed under default, readonly, strict and (but secret reads) the model fixture; denied under ci",
    async (technique, command) => {
      for (const name of ["default", "readonly", "strict", "model"] as const) {
        // The model fixture guards writes only: secret reads are not its subject.
        if (name === "model" && technique === "secret globs and expansions") continue;
        const d = await decide(name, command);
        expect(d.decision, `${name}: ${JSON.stringify(d.trail)}`).not.toBe("allow");
      }
      expect((await decide("ci", command)).decision).toBe("deny");
    },
  );
});

const SESSION = new URL("../../../../shared/fixtures/pi-large-session.jsonl", import.meta.url).pathname;

/** The distinct bash commands of the recorded session, in order. */
function sessionCommands(): string[] {
  let text: string;
  try {
    text = readFileSync(SESSION, "utf8");
  } catch {
    throw new Error(`the recorded Pi session is missing: put it at ${SESSION} (AGENTS.md, npm run test:pi)`);
  }
  const commands = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const content = (JSON.parse(line) as { message?: { content?: unknown } }).message?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content as { type?: string; name?: string; arguments?: { command?: unknown } }[])
      if (part.type === "toolCall" && part.name === "bash" && typeof part.arguments?.command === "string")
        commands.add(part.arguments.command);
  }
  return [...commands];
}

describe("false refusals: the bash commands of a real Pi session", () => {
  it("under default, every read, search, build and test command runs; only writes, deletes, publishing and unknown programs are refused", async () => {
    const commands = sessionCommands();
    expect(commands.length).toBeGreaterThanOrEqual(150);
    const refused: string[] = [];
    for (const command of commands)
      if ((await decide("default", command)).decision !== "allow") refused.push(command);
    // Each refused command writes outside the workspace tools, deletes, edits in place, commits,
    // publishes, installs or runs a program the policy does not name (see README "Policies").
    for (const command of refused)
      expect(command).toMatch(
        /sed -i|\brm\b|mkdir|\bcp\b|\bcode\b|git (add|commit|tag|push)|npm (run (version|publish)|install)|\/tmp\/fix|sleep|awk|tsgo/,
      );
    expect(commands.length - refused.length).toBe(ALLOWED_FIGURE);
  });
});

/** Commands of the session auto-allowed under default (README "Policies" prints this figure). */
const ALLOWED_FIGURE = 120;
