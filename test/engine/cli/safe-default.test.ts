/**
 * Safe by default, end to end on the engine: without --policy, exec refuses what the shipped
 * default policy denies and says which policy applied; allowing everything takes --policy allow-all;
 * a copy-mode exec that changed files saves its patch, which `warden diff` shows and `warden apply`
 * applies to the recorded workspace; a `warden run` transcript's policy is the one its replay uses.
 */
import { lstatSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { readRunTranscript } from "../../../src/agent/transcript.js";
import { recordPolicyFiles } from "../../../src/policy/index.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { agentTenant, containersOfTenant, cli as runCli } from "../../helpers/agent-fixture.js";
import { ALLOW_ALL_NOTICE, DEFAULT_POLICY_NOTICE, DEFAULT_POLICY_PATH } from "../../helpers/cli-policy.js";
import { warden } from "../../helpers/cli-run.js";
import { describeEngine } from "../../helpers/engine.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";
import { recordIdentity } from "../../helpers/session-patch.js";

const tenant = agentTenant("safe");
const TENANT = ["--tenant", tenant];

const REFUSED_ENV =
  "Tool call refused: read part '/workspace/.env' is denied by rule 'deny-secrets' (operator policy): secrets (.env, *.pem, *.key, ssh keys id_rsa etc., .git/config and its submodule / worktree / lock variants, .ssh, .netrc, .npmrc) are never read or written. Nothing was run.";
const REFUSED_RM =
  "Tool call refused: bash part 'rm -rf README.md' is denied by rule 'deny-rm' (operator policy): deleting files with rm is not allowed; use the edit or write tools, or ask the user. Nothing was run.";

/** The stderr line of a replay under the default policy its transcript recorded. */
const recordedPolicyLine = (recorded: Awaited<ReturnType<typeof recordPolicyFiles>>, transcript: string) =>
  `warden: policy: ${DEFAULT_POLICY_PATH} (sha256:${"digest" in recorded ? recorded.digest : ""}), as ${transcript} recorded; choose another with --policy FILE\n`;

describeEngine("safe by default (engine)", () => {
  let home: string;
  let ws: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "warden-safe-home-"));
    vi.stubEnv("WARDEN_HOME", home);
  });
  beforeEach(async () => {
    ws = await mkdtemp(join(tmpdir(), "warden-safe-ws-"));
    await chmod(ws, 0o777); // rw mode: the sandbox user (uid 1000) writes the bind-mounted directory
    await writeFile(join(ws, ".env"), "SECRET=1\n");
    await writeFile(join(ws, "README.md"), "# keep\n");
  });
  afterEach(async () => {
    await rm(ws, { recursive: true, force: true });
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await rm(home, { recursive: true, force: true });
    expect(await containersOfTenant(tenant)).toBe(0);
  });

  it("exec without --policy: read .env and rm -rf are refused by the default policy, which stderr names", async () => {
    const read = await warden(["exec", "read", '{"path":".env"}', "-w", ws, ...TENANT]);
    expect(read).toEqual({ stdout: "", stderr: `${DEFAULT_POLICY_NOTICE}${REFUSED_ENV}\n`, exitCode: 1 });
    const rmRun = await warden([
      "exec",
      "bash",
      '{"command":"rm -rf README.md"}',
      "-w",
      ws,
      "-m",
      "rw",
      ...TENANT,
    ]);
    expect(rmRun).toEqual({ stdout: "", stderr: `${DEFAULT_POLICY_NOTICE}${REFUSED_RM}\n`, exitCode: 1 });
    expect(await readFile(join(ws, "README.md"), "utf8")).toBe("# keep\n");
  });

  it("--policy allow-all is the explicit way to allow every call, and it says so", async () => {
    const read = await warden([
      "exec",
      "read",
      '{"path":".env"}',
      "-w",
      ws,
      "--policy",
      "allow-all",
      ...TENANT,
    ]);
    expect(read).toEqual({ stdout: "SECRET=1\n", stderr: ALLOW_ALL_NOTICE, exitCode: 0 });
    const both = await warden([
      "exec",
      "ls",
      "{}",
      "--policy",
      "allow-all",
      "--policy",
      DEFAULT_POLICY_PATH,
      ...TENANT,
    ]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toBe(
      `InvalidArgumentError: --policy allow-all turns the policy off, so it cannot be combined with policy files (got --policy allow-all --policy ${DEFAULT_POLICY_PATH}): pass --policy allow-all alone, or only the files (a file named allow-all: --policy ./allow-all).`,
    );
  });

  it("a copy-mode exec that changed a file saves its patch; diff shows it, apply writes it to the recorded workspace", async () => {
    const run = await warden(["exec", "write", '{"path":"new.txt","content":"N\\n"}', "-w", ws, ...TENANT]);
    expect(run.exitCode).toBe(0);
    const saved = /patch saved to (\S+) \(show it: warden diff \1; apply it: warden apply \1\)\n$/.exec(
      run.stderr,
    );
    expect(run.stderr).toBe(
      `${DEFAULT_POLICY_NOTICE}warden: the session changed 1 file in its copy of ${ws} (the host is untouched); ` +
        `patch saved to ${saved?.[1]} (show it: warden diff ${saved?.[1]}; apply it: warden apply ${saved?.[1]})\n`,
    );
    const patch = saved?.[1] ?? "";
    expect(patch.startsWith(join(home, "runs"))).toBe(true);
    await expect(readFile(join(ws, "new.txt"))).rejects.toThrow("ENOENT");
    const diff = await warden(["diff", patch, "--stat"]);
    expect(diff.stdout).toBe(" new.txt |    1 +\n 1 file changed, 1 insertion(+), 0 deletions(-)\n");
    // Applied from the repository's directory: it goes to the workspace the patch records.
    const applied = await warden(["apply", patch]);
    expect(applied).toEqual({
      stdout: `Applied ${patch} to ${ws}: 1 written, 0 deleted.\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(await readFile(join(ws, "new.txt"), "utf8")).toBe("N\n");
  });

  describe("warden run, then warden replay of its transcript", () => {
    let server: OpenAITestServer;
    beforeEach(async () => {
      server = await startOpenAITestServer();
    });
    afterEach(async () => {
      await server.close();
    });
    /** The model reads .env and runs rm -rf README.md, then stops. */
    const secretsAndRm = () =>
      server.push(
        {
          toolCalls: [
            { id: "c_env", name: "read", arguments: '{"path":".env"}' },
            { id: "c_rm", name: "bash", arguments: '{"command":"rm -rf README.md"}' },
          ],
        },
        { content: "done" },
      );
    const results = async (out: string): Promise<Array<[string, boolean, string]>> =>
      (await readFile(out, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as ToolResultMessage)
        .map((r) => [r.toolCallId, r.isError, (r.content[0] as { text: string }).text]);

    it("the run's default policy is recorded and its replay refuses the same calls", async () => {
      secretsAndRm();
      const transcript = join(home, "default-run.jsonl");
      const run = await runCli(
        ["-t", "x", "-w", ws, "--base-url", server.baseURL, "--transcript", transcript],
        tenant,
        {
          defaultPolicy: true,
        },
      );
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toBe(DEFAULT_POLICY_NOTICE);
      const tools = server.requests[1]?.body.messages.filter((m) => m.role === "tool").map((m) => m.content);
      expect(tools).toEqual([REFUSED_ENV, REFUSED_RM]);
      const recorded = await recordPolicyFiles([DEFAULT_POLICY_PATH]);
      expect(readRunTranscript(transcript).records[0]).toMatchObject({
        warden: "run_start",
        policy: recorded,
      });

      const out = join(home, "default-replay.jsonl");
      const replay = await warden(["replay", transcript, "-w", ws, "--out", out, ...TENANT]);
      expect(replay.exitCode).toBe(0);
      expect(replay.stderr).toBe(recordedPolicyLine(recorded, transcript));
      expect(await results(out)).toEqual([
        ["c_env", true, REFUSED_ENV],
        ["c_rm", true, REFUSED_RM],
      ]);
    });

    it("a replay without --workspace runs in the workspace the run recorded, and refuses when it was replaced", async () => {
      server.push(
        { toolCalls: [{ id: "c_readme", name: "read", arguments: '{"path":"README.md"}' }] },
        { content: "done" },
      );
      const transcript = join(home, "workspace-run.jsonl");
      const run = await runCli(
        ["-t", "x", "-w", ws, "--base-url", server.baseURL, "--transcript", transcript],
        tenant,
        {
          defaultPolicy: true,
        },
      );
      expect(run.exitCode).toBe(0);
      const recorded = await recordPolicyFiles([DEFAULT_POLICY_PATH]);
      const out = join(home, "workspace-replay.jsonl");
      const replay = await warden(["replay", transcript, "--out", out, ...TENANT]);
      expect(replay.exitCode).toBe(0);
      expect(replay.stderr).toBe(
        `warden: workspace: ${ws}, as ${transcript} recorded; choose another with --workspace DIR\n` +
          recordedPolicyLine(recorded, transcript),
      );
      expect(await results(out)).toEqual([["c_readme", false, "# keep\n"]]);

      // The same path, another directory (deleted and made again): nothing runs.
      const start = readRunTranscript(transcript).records[0];
      const id = start?.warden === "run_start" ? start.workspaceId : undefined;
      await rm(ws, { recursive: true });
      await mkdir(ws);
      const now = lstatSync(ws, { bigint: true });
      const refused = await warden(["replay", transcript, ...TENANT]);
      expect(refused).toEqual({
        stdout: "",
        stderr: `WorkspaceMovedError: ${transcript} records the workspace ${ws} (${recordIdentity(id)}), but ${ws} is now another directory (${recordIdentity({ dev: String(now.dev), ino: String(now.ino), born: now.birthtimeNs })}): the one the session copied was moved or replaced. Nothing ran. To replay it in another directory, name it: warden replay ${transcript} --workspace DIR.`,
        exitCode: 2,
      });
    });

    it("a replay refuses when the recorded policy file changed, naming both digests; --policy overrides and says so", async () => {
      const policy = join(home, "p.yaml");
      await copyFile(DEFAULT_POLICY_PATH, policy);
      secretsAndRm();
      const transcript = join(home, "changed-run.jsonl");
      const run = await runCli(
        ["-t", "x", "-w", ws, "--base-url", server.baseURL, "--transcript", transcript, "--policy", policy],
        tenant,
      );
      expect(run.exitCode).toBe(0);
      const was = await recordPolicyFiles([policy]);
      await writeFile(policy, `${await readFile(policy, "utf8")}# edited after the run\n`);
      const now = await recordPolicyFiles([policy]);
      const digest = (r: typeof was) => ("digest" in r ? r.digest : "");
      const refused = await warden(["replay", transcript, "-w", ws, ...TENANT]);
      expect(refused).toEqual({
        stdout: "",
        stderr:
          `RecordedPolicyChangedError: ${transcript} ran under the policy ${policy} (digest sha256:${digest(was)}), but they changed: their digest is now sha256:${digest(now)}. ` +
          "Replaying under other rules than the run's is refused: choose the replay's policy with --policy FILE (or --policy allow-all), or restore the files.",
        exitCode: 2,
      });

      const out = join(home, "override.jsonl");
      const replay = await warden([
        "replay",
        transcript,
        "-w",
        ws,
        "--out",
        out,
        "--policy",
        "allow-all",
        ...TENANT,
      ]);
      expect(replay.exitCode).toBe(0);
      expect(replay.stderr.split("\n")[0]).toBe(
        `warden: policy: allow-all (--policy), instead of the one ${transcript} recorded: ${policy} (sha256:${digest(was)})`,
      );
      expect(await results(out)).toEqual([
        ["c_env", false, "SECRET=1\n"],
        ["c_rm", false, "(no output)"],
      ]);
    });
  });
});
