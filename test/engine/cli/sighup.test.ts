/**
 * Closing the terminal sends SIGHUP, whose default action ends a Node process at once. Every
 * command that owns a session handles it like SIGTERM (src/cli/output/interrupt.ts): a real
 * `warden exec` and `warden run` process, sent SIGHUP while a command runs, exit 130 and leave no
 * container and no spill directory behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, afterEach, beforeEach, expect, it } from "vitest";
import { readRunTranscript } from "../../../src/agent/transcript.js";
import { agentTenant, containersOfTenant, workspace } from "../../helpers/agent-fixture.js";
import { describeEngine } from "../../helpers/engine.js";
import { REPO, tenantContainers } from "../../helpers/mcp-fixture.js";
import { type OpenAITestServer, startOpenAITestServer } from "../../helpers/openai-test-server.js";

const tenant = agentTenant("sighup");

/** The spill directories under `dir`. */
const spillDirs = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith("warden-spill-"));

/** Polls `ready` every 200 ms; throws naming `what` when it is not true after 60 s. */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describeEngine("SIGHUP cleans up like SIGTERM (real processes)", () => {
  let spillParent: string;
  let children: ChildProcess[] = [];
  let server: OpenAITestServer;
  beforeEach(async () => {
    spillParent = await mkdtemp(join(tmpdir(), "warden-sighup-"));
    server = await startOpenAITestServer();
  });
  afterEach(async () => {
    for (const child of children) child.kill("SIGKILL");
    children = [];
    await server.close();
    const docker = new Docker();
    for (const id of await tenantContainers(tenant))
      await docker.getContainer(id).remove({ force: true, v: true });
    await rm(spillParent, { recursive: true, force: true });
  });
  afterAll(async () => {
    expect(await containersOfTenant(tenant)).toBe(0);
  });

  /** Starts `warden <args>` with its temp directory (spill parent) under the test's. */
  const start = (args: string[]): ChildProcess => {
    const child = spawn(process.execPath, [join(REPO, "bin/warden.js"), ...args, "--tenant", tenant], {
      env: { ...process.env, TMPDIR: spillParent, OPENAI_API_KEY: "sk-test", WARDEN_HOME: spillParent },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    child.stdout?.resume();
    child.stderr?.resume();
    return child;
  };

  /** Waits for the session's container and spill directory, sends SIGHUP, and reports what is left. */
  const hangUp = async (child: ChildProcess) => {
    await until(
      "the container and the spill directory",
      async () => (await containersOfTenant(tenant)) === 1 && (await spillDirs(spillParent)).length === 1,
    );
    const exited = once(child, "exit");
    child.kill("SIGHUP");
    const [code, signal] = await exited;
    return {
      code,
      signal,
      containers: await containersOfTenant(tenant),
      spill: await spillDirs(spillParent),
    };
  };

  it("warden exec: exit 130, no container, no spill directory", async () => {
    const child = start(["exec", "bash", '{"command":"echo started; sleep 60"}', "--policy", "allow-all"]);
    expect(await hangUp(child)).toEqual({ code: 130, signal: null, containers: 0, spill: [] });
  });

  it("warden run: exit 130, no container, no spill directory, the transcript ends aborted", async () => {
    server.push({
      toolCalls: [{ id: "slow", name: "bash", arguments: '{"command":"echo started; sleep 60"}' }],
    });
    const transcript = join(spillParent, "run.jsonl");
    const child = start([
      "run",
      "-t",
      "x",
      "-w",
      workspace(),
      "--base-url",
      server.baseURL,
      "--transcript",
      transcript,
      "--policy",
      "allow-all",
      "--non-interactive",
    ]);
    expect(await hangUp(child)).toEqual({ code: 130, signal: null, containers: 0, spill: [] });
    expect(readRunTranscript(transcript).records.at(-1)).toMatchObject({
      warden: "run_end",
      stopReason: "aborted",
    });
  });
});
