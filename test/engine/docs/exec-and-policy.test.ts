/**
 * The README's shell journeys for one call, policies and the network, run as written
 * (test/helpers/doc-shell.ts: bash, `warden` = this checkout's bin/warden.js, a directory laid out
 * like a checkout). Needs `npm run build` and the images of `npm run setup`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { containersWith } from "../../helpers/agent-fixture.js";
import { checkoutLikeDir, runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet, REPO_ROOT } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";

const tenant = `test-docs-exec-${process.pid}`;

describeEngine("README: warden exec, policies, network (engine)", () => {
  const checkout = checkoutLikeDir();
  const run = (snippet: string) => runDocShell(snippet, { cwd: checkout.dir, tenant });
  afterAll(async () => {
    checkout.dispose();
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("exec-first-calls: ls, read and a copy-mode edit; the read prints the README's output; the host file is unchanged", async () => {
    const main = join(checkout.dir, "examples/workspace/src/main.go");
    const before = readFileSync(main, "utf8");
    const result = await run(docSnippet("README.md", "exec-first-calls"));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("src/");
    expect(result.stdout).toContain(docSnippet("README.md", "exec-read-output").trimEnd());
    expect(result.stdout).toMatch(/^\+ +7 \treturn 2$/m);
    expect(readFileSync(main, "utf8")).toBe(before);
  });

  it("policy-refused: the refusal the README shows, rule and all; exit 1", async () => {
    const snippet = docSnippet("README.md", "policy-refused");
    const shown = /^# (.*)$/m.exec(snippet)?.[1] ?? "";
    const result = await run(snippet);
    expect(result.exitCode).toBe(1);
    const parts = shown.split("…").map((p) => p.trim());
    expect(parts.length).toBe(2);
    for (const part of parts) expect(result.stdout + result.stderr).toContain(part);
  });

  it("policy-check-explain: the default policy's tests pass; explain names the deny rule", async () => {
    const result = await run(docSnippet("README.md", "policy-check-explain"));
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("deny-rm");
  });

  it("network-refused: a name the allowlist does not list is refused and audited as the README shows", async () => {
    const snippet = docSnippet("README.md", "network-refused");
    const shown = (/^# (.*)$/m.exec(snippet)?.[1] ?? "").replace(/ …$/, "");
    const result = await run(snippet);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(shown);
  });

  it("serve-hash-key: prints the sha256 of the key", async () => {
    const result = await run(docSnippet("README.md", "serve-hash-key"));
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(createHash("sha256").update("demo-key-acme").digest("hex"));
  });

  it("quickstart-demo: npm run demo replays the demo transcript and leaves the examples untouched", async () => {
    const result = await runDocShell(docSnippet("README.md", "quickstart-demo"), {
      cwd: REPO_ROOT,
      tenant,
      env: { WARDEN_DEMO_OUT: join(checkout.dir, "demo-results.jsonl") },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("host workspace examples/workspace untouched");
  });
});
