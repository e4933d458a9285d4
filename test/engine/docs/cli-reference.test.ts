/**
 * docs/cli.md's blocks, run as written: a cut bash output and its footer, and a replayed transcript
 * line. Needs `npm run build` and the sandbox image.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { containersWith } from "../../helpers/agent-fixture.js";
import { checkoutLikeDir, runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";

const tenant = `test-docs-cli-${process.pid}`;

describeEngine("docs/cli.md (engine)", () => {
  const checkout = checkoutLikeDir();
  afterAll(async () => {
    checkout.dispose();
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("exec-cut-output: the tail 1001..3000 and the footer the doc shows", async () => {
    const result = await runDocShell(docSnippet("docs/cli.md", "exec-cut-output"), {
      cwd: checkout.dir,
      tenant,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe("1001");
    expect(lines).toContain("3000");
    expect(lines).not.toContain("1000");
    const footer = docSnippet("docs/cli.md", "exec-cut-output-footer").trim();
    const parts = footer
      .split("…")
      .map((p) => p.trim())
      .filter((p) => p.length > 0);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(result.stdout).toContain(part);
  });

  it("replay-transcript-line: warden replay reads src/main.go from the line's call", async () => {
    writeFileSync(join(checkout.dir, "t.jsonl"), docSnippet("docs/cli.md", "replay-transcript-line"));
    const result = await runDocShell("warden replay t.jsonl --workspace examples/workspace --full", {
      cwd: checkout.dir,
      tenant,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("func answer() int {");
  });
});
