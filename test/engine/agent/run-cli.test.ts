/**
 * `warden run` through the CLI, end to end: the real openai client against the wire-protocol test
 * server, a real hardened copy-mode session, the review step. The host workspace never changes
 * unless --apply is confirmed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, expect, it } from "vitest";
import { readRunTranscript } from "../../../src/agent/transcript.js";
import { snapshotHost, workspaceHeader, workspaceRecordOf } from "../../../src/review/index.js";
import { getDocker, LABEL } from "../../../src/sandbox/index.js";
import { parseReplayTurns } from "../../../src/session/index.js";
import {
  agentTenant,
  containersOfTenant,
  EXPECTED_PATCH,
  editTask,
  outDir,
  cli as runCli,
  workspace,
} from "../../helpers/agent-fixture.js";
import { ALLOW_ALL_NOTICE } from "../../helpers/cli-policy.js";
import { describeEngine } from "../../helpers/engine.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

const tenant = agentTenant("cli");
const cli = (args: string[], own = tenant) => runCli(args, own);

/**
 * Whether a running container of `tenant` has a process whose command line holds `command`
 * (docker top; its ps needs the pid column).
 */
async function runsCommand(tenant: string, command: string): Promise<boolean> {
  const docker = getDocker();
  const running = await docker.listContainers({ filters: { label: [`${LABEL.tenant}=${tenant}`] } });
  for (const { Id } of running) {
    const top = (await docker
      .getContainer(Id)
      .top({ ps_args: "-o pid,args" })
      .catch(() => undefined)) as { Processes?: string[][] } | undefined;
    if (top?.Processes?.some((p) => p.join(" ").includes(command))) return true;
  }
  return false;
}

describeEngine("warden run CLI (engine)", () => {
  let server: OpenAITestServer;
  /** `warden run -t x -w ws` against the test server, transcript in `out/r.jsonl`, plus `extra` flags. */
  const runTask = (ws: string, out: string, extra: string[]) =>
    cli(["-t", "x", "-w", ws, "--base-url", server.baseURL, "--transcript", join(out, "r.jsonl"), ...extra]);
  beforeEach(async () => {
    server = await startOpenAITestServer();
  });
  afterEach(async () => {
    await server.close();
  });
  afterAll(async () => {
    expect(await containersOfTenant(tenant)).toBe(0);
  });

  it("a multi-turn task through the CLI exports the expected patch and leaves the host unchanged", async () => {
    const ws = workspace();
    const out = outDir();
    const before = await snapshotHost(ws);
    server.push(...editTask());
    const transcript = join(out, "run.jsonl");
    const result = await cli([
      "--task",
      "make greet friendlier and check it",
      "--workspace",
      ws,
      "--base-url",
      server.baseURL,
      "--model",
      "test-model",
      "--transcript",
      transcript,
      "--export-patch",
      join(out, "change.patch"),
    ]);
    expect(result.stderr).toBe(ALLOW_ALL_NOTICE);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(out, "change.patch"), "utf8")).toBe(EXPECTED_PATCH);
    // The saved patch records its workspace first (what `warden apply` applies it to).
    expect(readFileSync(`${transcript}.patch`, "utf8")).toBe(
      workspaceHeader(await workspaceRecordOf(ws)) + EXPECTED_PATCH,
    );
    expect(await snapshotHost(ws)).toEqual(before);
    expect(result.stdout).toContain(" 2 files changed, 2 insertions(+), 1 deletion(-)");

    // What the client sent back: results in call order with their ids, the real tool output.
    const tools = (n: number) => server.requests[n]?.body.messages.filter((m) => m.role === "tool");
    expect(tools(1)?.map((m) => m.tool_call_id)).toEqual(["call_read", "call_ls"]);
    expect(tools(1)?.[0]?.content).toBe(
      "def greet(name):\n    return 'Hello ' + name\n\nprint(greet('world'))\n",
    );
    expect(tools(1)?.[1]?.content).toBe("README.md\nsrc/");
    expect(tools(3)?.[3]).toEqual({ role: "tool", tool_call_id: "call_bash", content: "Hello, world!\n" });

    // The transcript round-trips through replay's parser: the same three batches.
    const turns = parseReplayTurns(readFileSync(transcript, "utf8"));
    expect(turns.map((t) => t.calls.map((c) => c.id))).toEqual([
      ["call_read", "call_ls"],
      ["call_edit"],
      ["call_bash"],
    ]);
    expect(readRunTranscript(transcript).records.map((r) => r.warden)).toEqual([
      "run_start",
      "tool_result",
      "tool_result",
      "tool_result",
      "tool_result",
      "run_end",
    ]);
    expect(readRunTranscript(transcript).records[0]).toMatchObject({
      warden: "run_start",
      workspace: ws,
      policy: { allowAll: true },
    });
  });

  it("--apply --yes writes the change to the host", async () => {
    const ws = workspace();
    server.push(...editTask());
    const out = outDir();
    const result = await runTask(ws, out, ["--apply", "--yes"]);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(ws, "src/greet.py"), "utf8")).toBe(
      "def greet(name):\n    return f'Hello, {name}!'\n\nprint(greet('world'))\n",
    );
    expect(readFileSync(join(ws, "out.txt"), "utf8")).toBe("ok\n");
    expect(result.stdout).toContain(`Applied to ${ws}: 2 written, 0 deleted.`);
  });

  it("--apply without a terminal and without --yes refuses and exits 1", async () => {
    const ws = workspace();
    const before = await snapshotHost(ws);
    server.push(...editTask());
    const out = outDir();
    const result = await runTask(ws, out, ["--apply"]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(
      "Not applied: --apply needs confirmation and there is no terminal to ask on; add --yes to apply anyway.",
    );
    expect(await snapshotHost(ws)).toEqual(before);
  });

  it("--policy: a denied call comes back to the model as a refusal and nothing changes", async () => {
    const ws = workspace();
    server.push(
      { toolCalls: [{ id: "w1", name: "write", arguments: '{"path":"new.txt","content":"x"}' }] },
      { content: "ok" },
    );
    const out = outDir();
    const result = await runTask(ws, out, ["--policy", join(process.cwd(), "policies/readonly.yaml")]);
    expect(result.exitCode).toBe(0);
    const tools = server.requests[1]?.body.messages.filter((m) => m.role === "tool");
    expect(tools?.[0]?.content).toBe(
      "Tool call refused: write part '/workspace/new.txt' is denied by rule 'deny-changes' (operator policy): " +
        "the read-only policy allows no edits or writes. Nothing was run.",
    );
    expect(result.stdout).toContain("No files changed in the sandbox; the host workspace is untouched.");
    const decisions = readRunTranscript(join(out, "r.jsonl")).records.filter((r) => r.warden === "decision");
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      audit: {
        tool: "write",
        decision: "deny",
        ruleId: "deny-changes",
        decider: "policy",
        msg: "policy decision",
      },
    });
  });

  it("SIGINT during a command: the CLI exits 130 and no container is left", async () => {
    server.push({ toolCalls: [{ id: "slow", name: "bash", arguments: '{"command":"sleep 60"}' }] });
    const own = `${tenant}-int`;
    const byTenant = () => containersOfTenant(own);
    const out = outDir();
    const run = cli(
      ["-t", "x", "-w", workspace(), "--base-url", server.baseURL, "--transcript", join(out, "r.jsonl")],
      own,
    );
    // Until the command runs in the sandbox (the test's timeout bounds the wait; a fixed wait after
    // the model's request is what a loaded host outlasts).
    await expect.poll(() => runsCommand(own, "sleep 60")).toBe(true);
    expect(await byTenant()).toBe(1);
    process.emit("SIGINT");
    const result = await run;
    expect(result.exitCode).toBe(130);
    expect(await byTenant()).toBe(0);
    const records = readRunTranscript(join(out, "r.jsonl")).records;
    expect(records.at(-1)).toMatchObject({ warden: "run_end", stopReason: "aborted", turns: 1 });
  });
});
