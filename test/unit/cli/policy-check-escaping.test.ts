/**
 * A re-test of F5: `warden policy check` printed a failing test's command and an unknown key raw, so
 * a policy layer from a workspace could drive the terminal. Its lines now show controls escaped.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, expect, it, vi } from "vitest";
import { registerPolicy } from "../../../src/cli/commands/policy.js";

afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

async function checkOutput(yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "warden-policy-check-"));
  try {
    const file = join(dir, "p.yaml");
    await writeFile(file, yaml);
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void lines.push(line));
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const program = new Command().exitOverride();
    registerPolicy(program);
    await program.parseAsync(["node", "warden", "policy", "check", file]);
    return lines.join("\n").replaceAll(dir, "<dir>");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

it("a failing test's command and note are shown with ESC and C1 escaped", async () => {
  const out = await checkOutput(
    [
      "rules:",
      "  - { id: r1, decision: allow, tools: [bash], commands: [ls] }",
      "tests:",
      '  - { tool: bash, args: { command: "ls \\e[2J\\x9b" }, expect: deny, note: "n\\e[31m" }',
      "",
    ].join("\n"),
  );
  expect(out).toBe(
    'FAIL <dir>/p.yaml: tests[0] bash {"command":"ls \\u001b[2J\\x9b"}: expected deny, got allow (rule r1, part \'ls \\x1b[2J\\x9b\') — n\\x1b[31m',
  );
});
