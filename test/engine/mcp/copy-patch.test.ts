/**
 * `warden mcp` in its documented client setup (copy mode, the client disconnects by closing stdin)
 * keeps the session's work: the patch is saved when the session ends and stderr names it, the
 * host workspace stays untouched, and `warden apply` takes the patch later.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { readWorkspaceHeader, workspaceRecordOf } from "../../../src/review/index.js";
import { DEFAULT_POLICY_NOTICE } from "../../helpers/cli-policy.js";
import { warden } from "../../helpers/cli-run.js";
import { describeEngine } from "../../helpers/engine.js";
import { containersLeft, REPO, testTenant } from "../../helpers/mcp-fixture.js";

const tenant = testTenant("copy-patch");
const dirs: string[] = [];

/** One JSON-RPC line to the server. */
const line = (message: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;

describeEngine("warden mcp saves a copy-mode session's change", () => {
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    expect(await containersLeft(tenant)).toEqual([]);
  });

  it("on disconnect: the patch saved and named on stderr, the host untouched, warden apply takes it", async () => {
    const ws = await mkdtemp(join(tmpdir(), "warden-mcp-ws-"));
    const home = await mkdtemp(join(tmpdir(), "warden-mcp-home-"));
    dirs.push(ws, home);
    await writeFile(join(ws, "notes.txt"), "one\n");
    // No --policy: the default policy allows workspace edits in copy mode.
    const child = spawn(
      process.execPath,
      [join(REPO, "bin/warden.js"), "mcp", "--workspace", ws, "--tenant", tenant],
      {
        env: { ...process.env, WARDEN_HOME: home },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const replies: Array<{ id?: number; result?: { isError?: boolean } }> = [];
    let buffered = "";
    const replied = (id: number) =>
      new Promise<void>((resolve) => {
        const check = () => (replies.some((r) => r.id === id) ? resolve() : setTimeout(check, 50));
        check();
      });
    child.stdout.on("data", (c: Buffer) => {
      buffered += c.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) replies.push(JSON.parse(l));
    });
    try {
      child.stdin.write(
        line({
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        }),
      );
      await replied(1);
      child.stdin.write(line({ method: "notifications/initialized" }));
      child.stdin.write(
        line({
          id: 2,
          method: "tools/call",
          params: {
            name: "edit",
            arguments: { path: "notes.txt", edits: [{ oldText: "one", newText: "two" }] },
          },
        }),
      );
      await replied(2);
      expect(replies.find((r) => r.id === 2)?.result?.isError).toBe(false);
      const exited = once(child, "exit");
      child.stdin.end();
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(await readFile(join(ws, "notes.txt"), "utf8")).toBe("one\n");
    const saved = /patch saved to (\S+) \(show it/.exec(stderr)?.[1] ?? "";
    expect(stderr.startsWith(DEFAULT_POLICY_NOTICE)).toBe(true);
    expect(stderr).toContain(
      `warden: the session changed 1 file in its copy of ${ws} (the host is untouched); patch saved to ${saved} (show it: warden diff ${saved}; apply it: warden apply ${saved})\n`,
    );
    expect(saved.startsWith(join(home, "runs"))).toBe(true);
    const text = await readFile(saved, "utf8");
    expect(readWorkspaceHeader(text)).toEqual(await workspaceRecordOf(ws));
    expect(text).toContain("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n");
    const applied = await warden(["apply", saved]);
    expect(applied).toEqual({
      stdout: `Applied ${saved} to ${ws}: 1 written, 0 deleted.\n`,
      stderr: "",
      exitCode: 0,
    });
    expect(await readFile(join(ws, "notes.txt"), "utf8")).toBe("two\n");
  });
});
