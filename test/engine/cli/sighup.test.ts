/**
 * Closing the terminal sends SIGHUP, whose default action ends a Node process at once. Every
 * command that owns a session handles it like SIGTERM (src/cli/session/interrupt.ts): a real
 * `warden exec` and `warden run` process, sent SIGHUP while a command runs, exit 130 and leave no
 * container and no spill directory behind; a copy-mode exec saves the change it made so far.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
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

/**
 * Polls `ready` until it is true; fails naming `what` when it is not by expect.poll's default
 * timeout, just under the test's (no budget of its own, which a loaded host could outlast).
 */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  await expect.poll(ready, { message: `waiting for ${what}`, interval: 200 }).toBe(true);
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

  /**
   * Waits for the session's container and spill directory (and, with `file`, for that file in the
   * sandbox's /workspace), sends SIGHUP, and reports what is left.
   */
  const hangUp = async (child: ChildProcess, file?: string) => {
    await until(
      "the container and the spill directory",
      async () => (await containersOfTenant(tenant)) === 1 && (await spillDirs(spillParent)).length === 1,
    );
    if (file) {
      const [id] = await tenantContainers(tenant);
      await until(`/workspace/${file} in the sandbox`, async () => {
        const probe = spawnSync("docker", ["exec", id ?? "", "test", "-e", `/workspace/${file}`]);
        return probe.status === 0;
      });
    }
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

  it("warden exec: exit 130, no container, no spill directory; the change made so far is saved", async () => {
    const ws = workspace();
    const child = start([
      "exec",
      "bash",
      '{"command":"echo kept > kept.txt; echo started; sleep 60"}',
      "-w",
      ws,
      "--policy",
      "allow-all",
    ]);
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    expect(await hangUp(child, "kept.txt")).toEqual({ code: 130, signal: null, containers: 0, spill: [] });
    const saved = /patch saved to (\S+) \(show it/.exec(stderr)?.[1] ?? "";
    expect(stderr).toContain(
      `warden: the session changed 1 file in its copy of ${ws} (the host is untouched); patch saved to ${saved} `,
    );
    expect(await readFile(saved, "utf8")).toContain(
      "--- /dev/null\n+++ b/kept.txt\n@@ -0,0 +1,1 @@\n+kept\n",
    );
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
