/**
 * Issue 37 item 11, measured live: the ordinary-command corpus (test/fixtures/policy/
 * ordinary-commands.txt) judged by a live policy hook (createPolicyHook on a real sandbox: paths
 * resolved, listings, globs and recursive searches judged with the workspace's files,
 * src/policy/live-paths.ts) under the shipped default and readonly policies, in a realistic
 * workspace: the corpus's files, a git repository whose .git/config holds a token, a `.env`, and
 * `.ssh/id_rsa`. Nothing runs: the hook is called on its own, an ask is counted when the approver
 * is asked (it answers deny). Then the refusals the live judgement keeps: a listing that can
 * produce `.env.ts`, `.ssh/known_hosts` or a link to `.env`, and `grep -r` over a `.env`; and (attack-38c)
 * what the walk cannot tell: an unreadable directory, a link to a directory a search follows, a
 * listed name beginning with `-`.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BeforeToolCallHook } from "../../../src/pipeline/index.js";
import { createPolicyHook, evaluate, lexicalContext, loadPolicy } from "../../../src/policy/index.js";
import type { Sandbox } from "../../../src/sandbox/index.js";
import type { AnyTool } from "../../../src/tools/index.js";
import { createTestSandbox, describeBackend } from "../../helpers/backend.js";

const tenant = `test-ordinary-${randomBytes(3).toString("hex")}`;
const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
const commands = readFileSync(new URL("../../fixtures/policy/ordinary-commands.txt", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"));

/** The workspace's ordinary files: those the corpus names, and a few more of each kind. */
const FILES = [
  "package.json",
  "README.md",
  "tsconfig.json",
  ".gitignore",
  "bin/warden.js",
  "images/sandbox/Dockerfile",
  "policies/default.yaml",
  "policies/ci.yaml",
  "policies/strict.yaml",
  "policies/README.md",
  "docs/policies.md",
  "docs/network.md",
  "docs/security.md",
  "src/index.ts",
  "src/errors.ts",
  "src/version.ts",
  "src/util/abort.ts",
  "src/util/slots.ts",
  "src/util/index.ts",
  "src/tools/bash.ts",
  "src/tools/read.ts",
  "src/tools/index.ts",
  "src/session/session.ts",
  "src/session/index.ts",
  "src/sandbox/types.ts",
  "src/sandbox/index.ts",
  "src/server/http/app.ts",
  "src/cli/main.ts",
  "src/pipeline/index.ts",
  "src/policy/match.ts",
  "src/policy/evaluate.ts",
  "src/policy/bash/analyze.ts",
  "src/policy/types.ts",
  "src/policy/index.ts",
  "test/unit/policy/evaluate.test.ts",
  "test/unit/policy/ordinary-commands.test.ts",
  "test/unit/errors.test.ts",
  "test/helpers/engine.ts",
  "test/engine/tools.test.ts",
  "test/fixtures/bypass-corpus.json",
  "test/fixtures/bypass-corpus-policy.yaml",
  "packages/tui/package.json",
  "packages/tui/src/components/markdown.ts",
  "packages/tui/test/markdown.test.ts",
  "packages/coding-agent/package.json",
  "packages/coding-agent/src/tui/tui-renderer.ts",
  "packages/coding-agent/src/tui/custom-editor.ts",
  "app.log",
];
const TOKEN = "ghp_live0rdinary7oken";

/** The live decision of `hook` on a bash `command`: ask when the approver was asked, else the audit's. */
async function liveDecision(hook: BeforeToolCallHook, asked: string[], sandbox: Sandbox, command: string) {
  const before = asked.length;
  const args = { command };
  const result = await hook({
    call: { id: "c1", name: "bash", arguments: args },
    tool: { name: "bash" } as AnyTool,
    args,
    sandbox,
    sessionId: tenant,
  });
  if (asked.length > before) return "ask";
  return result && "block" in result ? "deny" : "allow";
}

describeBackend("ordinary read-only commands judged live (issue 37 item 11)", () => {
  let ws: string;
  let sandbox: Sandbox;
  const hooks: Record<string, { hook: BeforeToolCallHook; asked: string[] }> = {};
  beforeAll(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-ordinary-"));
    for (const file of FILES) {
      await mkdir(join(ws, dirname(file)), { recursive: true });
      await writeFile(join(ws, file), file.endsWith(".json") ? '{"name":"x","scripts":{}}\n' : "TODO x\n");
    }
    await writeFile(join(ws, ".gitignore"), ".env\n.ssh/\n");
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", ws, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
        encoding: "utf8",
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "init");
    git("remote", "add", "origin", `https://x:${TOKEN}@example.com/o/r.git`);
    await writeFile(join(ws, ".env"), "API_KEY=live-ordinary-secret\n");
    await mkdir(join(ws, ".ssh"));
    await writeFile(join(ws, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    await chmod(ws, 0o755);
    sandbox = await createTestSandbox({ tenant, workspace: { hostPath: ws, mode: "copy" } });
    for (const name of ["default", "readonly"]) {
      const asked: string[] = [];
      const hook = createPolicyHook({
        policy: await loadPolicy([shipped(name)]),
        sessionId: tenant,
        approval: {
          request: async (req) => {
            asked.push(JSON.stringify(req.args));
            return "deny";
          },
        },
      });
      hooks[name] = { hook, asked };
    }
  }, 120_000);
  afterAll(async () => {
    await sandbox?.destroy();
    if (ws) await rm(ws, { recursive: true, force: true });
  });

  /** Measured live (docs-pending/c3.md states them): commands allowed of the 346. */
  const LIVE_ALLOWED = { default: 336, readonly: 336 } as const;

  it.each(["default", "readonly"] as const)(
    "under %s at least 97 % of the corpus is allowed live (the measured share)",
    async (name) => {
      const { hook, asked } = hooks[name] as { hook: BeforeToolCallHook; asked: string[] };
      const refused: string[] = [];
      for (const command of commands) {
        const decision = await liveDecision(hook, asked, sandbox, command);
        if (decision !== "allow") refused.push(`${decision} ${JSON.stringify(command)}`);
      }
      const allowed = commands.length - refused.length;
      console.info(
        `${name} (live): ${allowed} of ${commands.length} allowed (${((100 * allowed) / commands.length).toFixed(1)} %)${refused.map((r) => `\n  ${r}`).join("")}`,
      );
      expect(allowed / commands.length).toBeGreaterThanOrEqual(0.97);
      expect(allowed, refused.join("\n")).toBe(LIVE_ALLOWED[name]);
    },
    120_000,
  );

  it("keeps refusing what the workspace makes a secret read: .env.ts, .ssh/known_hosts, a link to .env, grep -r over .env", async () => {
    const { hook, asked } = hooks.default as { hook: BeforeToolCallHook; asked: string[] };
    const live = (command: string) => liveDecision(hook, asked, sandbox, command);
    const policy = await loadPolicy([shipped("default")]);
    const lexical = async (command: string) =>
      (await evaluate(policy, { tool: "bash", args: { command } }, lexicalContext)).decision;
    // Lexically these ask (`*.ts` names .env.ts; grep -r is judged on its directory alone).
    expect(await lexical("find . -name '*.ts' | xargs cat")).toBe("ask");
    expect(await lexical("grep -r SECRET .")).toBe("allow");
    // In this workspace nothing they produce is a secret, but grep -r reads .env.
    expect(await live("find . -name '*.ts' | xargs cat")).toBe("allow");
    expect(await live("grep -r SECRET src")).toBe("allow");
    expect(await live("grep -r SECRET .")).toBe("deny");
    expect(await live("grep -rl SECRET . | xargs cat")).toBe("deny");
    await sandbox.writeFile("/workspace/src/.env.ts", Buffer.from("export const k = 1;\n"));
    expect(await live("find . -name '*.ts' | xargs cat")).toBe("deny");
    expect(await live("wc -l $(find src -name '*.ts')")).toBe("deny");
    await sandbox.exec({ argv: ["rm", "/workspace/src/.env.ts"] });
    expect(await live("find . -name '*.ts' | xargs cat")).toBe("allow");
    await sandbox.writeFile("/workspace/.ssh/known_hosts", Buffer.from("example.com ssh-ed25519 AAAA\n"));
    expect(await live("find . -name known_hosts | xargs cat")).toBe("deny");
    await sandbox.exec({ argv: ["ln", "-s", "../.env", "/workspace/src/link.ts"] });
    expect(await live("find src -name '*.ts' | xargs cat")).toBe("deny");
    // A script that writes may create what the listing then prints: judged lexically (ask).
    expect(await live("touch src/x.md; find src -name '*.md' | xargs cat")).not.toBe("allow");
  });

  // attack-38c: each read a secret in a live session before the fix (`warden exec --mode ro`).
  it("refuses what the walk cannot tell: an unreadable directory, a followed link to a directory, a name that is an option (attack-38c)", async () => {
    const { hook, asked } = hooks.default as { hook: BeforeToolCallHook; asked: string[] };
    const live = (command: string) => liveDecision(hook, asked, sandbox, command);
    const run = (...argv: string[]) => sandbox.exec({ argv });
    // The test above leaves src/link.ts → ../.env, which ls's bare names below may be.
    await run("rm", "-f", "/workspace/src/link.ts");
    await run("mkdir", "-p", "/workspace/attack/locked", "/workspace/attack/open");
    await run("sh", "-c", "echo x > /workspace/attack/open/a.ts");
    expect(await live("grep -r SECRET attack")).toBe("allow");
    // The sandbox user may not read attack/locked: find fails, grep skips it and reads the rest.
    await run("chmod", "000", "/workspace/attack/locked");
    expect(await live("grep -r SECRET attack")).toBe("ask");
    await run("chmod", "755", "/workspace/attack/locked");
    // Nothing there: nothing read.
    expect(await live("grep -r SECRET attack/none")).toBe("allow");
    // grep's options as getopt_long reads them; a grep after cd or under env -C.
    expect(await live("grep --recur SECRET .")).toBe("deny");
    expect(await live("grep --directories recurse SECRET .")).toBe("deny");
    expect(await live("grep -r -eSECRET . attack")).toBe("deny");
    expect(await live("cd attack && grep -r SECRET ..")).not.toBe("allow");
    expect(await live("env -C /workspace grep -r SECRET .")).toBe("deny");
    // A link to the workspace below: grep -R and rg -L follow it, grep -r does not.
    await run("ln", "-s", "..", "/workspace/attack/up");
    expect(await live("grep -r SECRET attack")).toBe("allow");
    expect(await live("grep -R SECRET attack")).toBe("ask");
    expect(await live("rg -L SECRET attack")).toBe("ask");
    await run("rm", "/workspace/attack/up");
    // ls prints bare names: `--files0-from=lst` would make wc read the files lst names.
    expect(await live("ls attack/open | xargs wc -l")).toBe("allow");
    await run("touch", "/workspace/attack/open/--files0-from=lst");
    expect(await live("ls attack/open | xargs wc -l")).toBe("ask");
    // A name that is not UTF-8: the walk cannot name it (nor resolve the link), so it is not judged live.
    await run("bash", "-c", "ln -s ../.env $'/workspace/attack/\\xff.ts'");
    expect(await live("find attack -name '*.ts' | xargs cat")).not.toBe("allow");
    expect(await live("grep -r SECRET attack")).toBe("ask");
    await run("bash", "-c", "rm $'/workspace/attack/\\xff.ts'");
    // rg's dot rule is not trusted: an ignore file's `!.env` makes rg search .env.
    expect(await live("rg SECRET")).toBe("deny");
    await run("rm", "-rf", "/workspace/attack");
  });
});
