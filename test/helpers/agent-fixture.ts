/**
 * Fixture of the `warden run` engine tests: a unique `test-agent-…` tenant per file, a small host
 * workspace, the scripted edit task and its exact patch, and the CLI run in-process with output captured.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { vi } from "vitest";
import { registerRun } from "../../src/cli/commands/run.js";
import { gitBlobId, NULL_OID } from "../../src/review/index.js";
import { getDocker } from "../../src/sandbox/docker/engine.js";
import { LABEL } from "../../src/sandbox/labels.js";
import type { ScriptedResponse } from "./openai-test-server.js";

/** A tenant label unique to one test file. */
export function agentTenant(name: string): string {
  return `test-agent-${name}-${randomBytes(3).toString("hex")}`;
}

const GREET_PY = "def greet(name):\n    return 'Hello ' + name\n\nprint(greet('world'))\n";

/** A host workspace: src/greet.py and README.md. */
export function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-agent-ws-"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src/greet.py"), GREET_PY);
  writeFileSync(join(dir, "README.md"), "# demo\n");
  return dir;
}

/** A fresh output directory (transcripts, patches). */
export const outDir = (): string => mkdtempSync(join(tmpdir(), "warden-agent-out-"));

/** Containers carrying a label `key=value` (all states). */
export async function containersWith(key: string, value: string): Promise<number> {
  return (await getDocker().listContainers({ all: true, filters: { label: [`${key}=${value}`] } })).length;
}

export const containersOfSession = (sessionId: string) => containersWith(LABEL.session, sessionId);
export const containersOfTenant = (tenant: string) => containersWith(LABEL.tenant, tenant);

/**
 * Runs `warden run …` in-process (commander), with --tenant and --non-interactive added, and
 * `--policy allow-all` unless `args` name a policy or `defaultPolicy` is set: these tests script the
 * model's calls, and most are about the run, not the policy (without --policy the default policy applies).
 */
export async function cli(
  args: string[],
  tenant: string,
  options: { defaultPolicy?: boolean } = {},
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  process.exitCode = undefined;
  try {
    const program = new Command("warden").exitOverride();
    registerRun(program);
    const policy = options.defaultPolicy || args.includes("--policy") ? [] : ["--policy", "allow-all"];
    await program.parseAsync(["run", ...args, ...policy, "--tenant", tenant, "--non-interactive"], {
      from: "user",
    });
    return { exitCode: Number(process.exitCode ?? 0), stdout: out.join(""), stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    process.exitCode = undefined;
  }
}

/** The scripted model side of a 4-turn task: read+ls, edit, bash, final answer. */
export const editTask = (): ScriptedResponse[] => [
  {
    content: "Let me look first.",
    toolCalls: [
      { id: "call_read", name: "read", arguments: '{"path":"src/greet.py"}' },
      { id: "call_ls", name: "ls", arguments: '{"path":"."}' },
    ],
  },
  {
    toolCalls: [
      {
        id: "call_edit",
        name: "edit",
        arguments: JSON.stringify({
          path: "src/greet.py",
          edits: [{ oldText: "'Hello ' + name", newText: "f'Hello, {name}!'" }],
        }),
      },
    ],
  },
  {
    toolCalls: [
      { id: "call_bash", name: "bash", arguments: '{"command":"python3 src/greet.py && echo ok > out.txt"}' },
    ],
  },
  { content: "Done: greet now prints Hello, world!" },
];

/** The exact patch that task produces. */
export const EXPECTED_PATCH = [
  "diff --git a/out.txt b/out.txt",
  "new file mode 100644",
  `index ${NULL_OID}..${gitBlobId(Buffer.from("ok\n"))}`,
  "--- /dev/null",
  "+++ b/out.txt",
  "@@ -0,0 +1,1 @@",
  "+ok",
  "diff --git a/src/greet.py b/src/greet.py",
  `index ${gitBlobId(Buffer.from(GREET_PY))}..${gitBlobId(Buffer.from(GREET_PY.replace("'Hello ' + name", "f'Hello, {name}!'")))}`,
  "--- a/src/greet.py",
  "+++ b/src/greet.py",
  "@@ -1,4 +1,4 @@",
  " def greet(name):",
  "-    return 'Hello ' + name",
  "+    return f'Hello, {name}!'",
  " ",
  " print(greet('world'))",
  "",
].join("\n");
