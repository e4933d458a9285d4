/**
 * Issue 37, item 1, through the real pipeline: the reported here-document attacks (a backtick in a
 * `<<E` body under readonly, `$(…)` in a `<<-` body under ci, a secret read in a body in `ro`
 * mode) are refused in a live session and `src` and `.env` stay unread and intact, while the
 * same commands with no policy do what the policy must stop. Every form of
 * test/fixtures/heredoc-corpus.ts is run by the sandbox's own bash (`touch ran` for the body's
 * command) to prove its `bash` field, and the analysis sees `touch ran` in each form it claims to see.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { analyzeBash, createPolicyHookFromFiles, loadBashParser } from "../../../src/policy/index.js";
import type { Session } from "../../../src/session/types.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { HEREDOC_CORPUS } from "../../fixtures/heredoc-corpus.js";
import { createTestSession, describeBackend } from "../../helpers/backend.js";

const tenant = `test-heredoc-${randomBytes(3).toString("hex")}`;
const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
const text = (r: ToolResultMessage | undefined) => (r?.content[0]?.type === "text" ? r.content[0].text : "");
const SECRET = "API_KEY=heredoc-secret-37";

/** The corpus command with its body's command made harmless: it creates /workspace/ran. */
const marked = (command: string) =>
  command
    .replaceAll("rm -rf src", "touch ran")
    .replaceAll("rm \\\n-rf src", "touch \\\nran")
    .replaceAll("cat .env", "touch ran");

describeBackend("here-document bodies through a live session (issue 37, item 1)", () => {
  const dirs: string[] = [];
  const sessions: Session[] = [];
  /** A session on a fresh workspace holding src/a.ts and .env, under `policy` (none when null). */
  const open = async (policy: string | null, mode: "copy" | "ro" = "copy") => {
    const dir = mkdtempSync(join(tmpdir(), "warden-heredoc-"));
    dirs.push(dir);
    chmodSync(dir, 0o755); // a read-only mount is the host directory itself: the sandbox user enters it
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src/a.ts"), "export {};\n");
    writeFileSync(join(dir, ".env"), `${SECRET}\n`);
    const hooks = policy
      ? [await createPolicyHookFromFiles([shipped(policy)], { sessionId: tenant, nonInteractive: true })]
      : [];
    const session = await createTestSession({
      tenant,
      sandbox: { workspace: { hostPath: dir, mode } },
      beforeToolCall: hooks,
    });
    sessions.push(session);
    return session;
  };
  const bash = async (session: Session, command: string) => {
    const [result] = await session.runToolCalls([{ id: "c1", name: "bash", arguments: { command } }]);
    return result;
  };

  beforeAll(async () => {
    await loadBashParser();
  });
  afterAll(async () => {
    for (const s of sessions) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const attacks = [
    ["readonly", "cat <<E\n`rm -rf src`\nE", "bash part 'rm -rf src' is denied"],
    [
      "ci",
      "cat <<-E\n\t$(rm -rf src; echo deleted)\n\tE",
      "bash part 'rm -rf src' is denied by rule 'deny-rm'",
    ],
  ] as const;

  it.each(attacks)(
    "under %s, %j is refused and src/a.ts is intact; with no policy it deletes src",
    async (policy, command, refusal) => {
      const guarded = await open(policy);
      const refused = await bash(guarded, command);
      expect(refused?.isError).toBe(true);
      expect(text(refused)).toContain(refusal);
      expect(text(refused)).toContain("Nothing was run.");
      expect(await guarded.sandbox.stat("/workspace/src/a.ts")).toMatchObject({ type: "file", size: 11 });

      const open_ = await open(null);
      const ran = await bash(open_, command);
      expect(ran?.isError).toBe(false);
      expect(await open_.sandbox.stat("/workspace/src")).toBeNull();
    },
    120_000,
  );

  it("in ro mode under readonly, a here-doc reading .env is refused and prints nothing of it", async () => {
    const guarded = await open("readonly", "ro");
    const refused = await bash(guarded, "cat <<-E\n\t`cat .env`\n\tE");
    expect(refused?.isError).toBe(true);
    expect(text(refused)).toContain("is denied by rule 'deny-secrets'");
    expect(text(refused)).not.toContain(SECRET);
    const control = await open(null, "ro");
    expect(text(await bash(control, "cat <<-E\n\t`cat .env`\n\tE"))).toBe(`${SECRET}\n`);
  }, 120_000);

  it("the sandbox's bash runs each corpus body as its `bash` field says, and the analysis sees each body it claims to", async () => {
    const session = await open(null);
    const seen: string[] = [];
    const got: string[] = [];
    const want: string[] = [];
    for (const c of HEREDOC_CORPUS) {
      const command = marked(c.command);
      await bash(session, command);
      const ran = text(await bash(session, "if test -e ran; then echo runs; rm ran; else echo data; fi"));
      got.push(`${c.form}: ${ran.trim()}`);
      want.push(`${c.form}: ${c.bash}`);
      // A form decided by the body's own command under readonly is one the analysis sees.
      const sees = analyzeBash(command).some((p) => p.kind === "command" && p.text === "touch ran");
      if (c.readonly[1] === "rm -rf src" || c.readonly[1] === "/workspace/.env")
        seen.push(`${c.form}: ${sees}`);
    }
    expect(got).toEqual(want);
    expect(seen.length).toBeGreaterThanOrEqual(15);
    expect(seen.filter((s) => !s.endsWith(": true"))).toEqual([]);
  }, 300_000);
});
