/**
 * Issue 37 item 11: the false-refusal corpus of ordinary read-only developer commands
 * (test/fixtures/policy/ordinary-commands.txt, committed; shaped after a real recorded Pi session)
 * under the shipped default and readonly policies, evaluated as `warden policy explain` does
 * (lexical paths, no sandbox). The figures are asserted exactly and the commands not allowed are
 * printed with the part and reason that decided; docs/policies.md states them. Lexically a
 * listing whose name filter may name a secret (`find src -name '*.ts'`: `*.ts` names `.env.ts`)
 * asks, so the lexical share (91.3 %) is the conservative bound; a live session judges those
 * listings with the workspace's files, and the issue's target, 97 % under each, is asserted there
 * (test/engine/policy/ordinary-live.test.ts: 336 of 346 under each).
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";

const CORPUS = new URL("../../fixtures/policy/ordinary-commands.txt", import.meta.url);

/** The corpus's commands: one a line, without blank lines and `#` comments. */
function ordinaryCommands(): string[] {
  return readFileSync(CORPUS, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
}

/** The measured figures (docs/policies.md prints them): commands allowed, of the corpus. */
const ALLOWED = { default: 316, readonly: 316 } as const;

const policies = {} as Record<keyof typeof ALLOWED, Policy>;
beforeAll(async () => {
  for (const name of Object.keys(ALLOWED) as (keyof typeof ALLOWED)[])
    policies[name] = await loadPolicy([new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname]);
});

describe("ordinary read-only commands (issue 37 item 11)", () => {
  const commands = ordinaryCommands();

  it("the corpus holds at least 300 distinct commands", () => {
    expect(commands.length).toBeGreaterThanOrEqual(300);
    expect(new Set(commands).size).toBe(commands.length);
  });

  it.each(Object.keys(ALLOWED) as (keyof typeof ALLOWED)[])(
    "under %s the measured share is allowed",
    async (name) => {
      const refused: string[] = [];
      for (const command of commands) {
        const d = await evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);
        if (d.decision !== "allow")
          refused.push(`${d.decision} ${JSON.stringify(command)}: ${d.part} — ${d.reason ?? d.ruleId ?? ""}`);
      }
      const allowed = commands.length - refused.length;
      const share = (100 * allowed) / commands.length;
      console.info(
        `${name}: ${allowed} of ${commands.length} allowed (${share.toFixed(1)} %)${refused.map((r) => `\n  ${r}`).join("")}`,
      );
      expect(allowed, refused.join("\n")).toBe(ALLOWED[name]);
    },
  );
});
