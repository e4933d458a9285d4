/**
 * The README's `warden run` journey as written: a task on `myproject`, `warden diff`, `warden apply`,
 * with the model played by the scripted OpenAI-compatible test server (OPENAI_BASE_URL, as the
 * README's provider block sets it). Needs `npm run build` and the sandbox image.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { containersWith, editTask, workspace } from "../../helpers/agent-fixture.js";
import { runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";
import { startOpenAITestServer } from "../../helpers/openai-test-server.js";

const tenant = `test-docs-run-${process.pid}`;

describeEngine("README: warden run, diff, apply (engine)", () => {
  const dir = mkdtempSync(join(tmpdir(), "warden-docs-run-"));
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("run-review-apply: the run leaves myproject unchanged, diff shows the patch, apply writes it", async () => {
    cpSync(workspace(), join(dir, "myproject"), { recursive: true });
    const server = await startOpenAITestServer();
    try {
      // The journey runs under the default policy (no --policy): without a terminal its `ask` is a
      // refusal, so the scripted bash call is one it allows (editTask's `python3 …` asks).
      const task = editTask();
      task[2] = {
        toolCalls: [
          {
            id: "call_bash",
            name: "bash",
            arguments: '{"command":"grep -c Hello src/greet.py && echo ok > out.txt"}',
          },
        ],
      };
      server.push(...task);
      const lines = docSnippet("README.md", "run-review-apply").trimEnd().split("\n");
      expect(lines).toHaveLength(3);
      const env = { OPENAI_BASE_URL: server.baseURL };
      // The three commands one at a time, to look at the workspace between them.
      const ran = await runDocShell(lines[0]!, { cwd: dir, tenant, env });
      expect(ran.exitCode, ran.stderr).toBe(0);
      expect(ran.stderr).toContain("warden: policy: the default, ");
      expect(readFileSync(join(dir, "myproject/src/greet.py"), "utf8")).toContain("'Hello ' + name");
      const diff = await runDocShell(lines[1]!, { cwd: dir, tenant, env });
      expect(diff.exitCode, diff.stderr).toBe(0);
      expect(diff.stdout).toContain("+    return f'Hello, {name}!'");
      const applied = await runDocShell(lines[2]!, { cwd: dir, tenant, env });
      expect(applied.exitCode, applied.stderr).toBe(0);
      expect(readFileSync(join(dir, "myproject/src/greet.py"), "utf8")).toContain("f'Hello, {name}!'");
      expect(readFileSync(join(dir, "myproject/out.txt"), "utf8")).toBe("ok\n");
    } finally {
      await server.close();
    }
  });
});
