/**
 * The README's "no model provider?" snippet as written: the scripted model of examples/scripted-model
 * started in the background, `warden run` on examples/workspace with the real built CLI and the real
 * engine, `warden diff` showing the scripted edit, and the server stopped. Runs in a checkout-like
 * copy (examples/, policies/); examples/workspace must come out unchanged (copy mode). Needs
 * `npm run build`, the sandbox image and port 8787 free (the snippet's default port).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { DEFAULT_PORT } from "../../../examples/scripted-model/server.mjs";
import { containersWith } from "../../helpers/agent-fixture.js";
import { checkoutLikeDir, runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet, REPO_ROOT } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";

const tenant = `test-docs-scripted-${process.pid}`;

/** Every file under `dir` (relative path → bytes), to compare trees. */
function tree(dir: string): Map<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  return new Map(
    files.map((e) => {
      const path = join(e.parentPath, e.name);
      return [path.slice(dir.length), readFileSync(path).toString("base64")];
    }),
  );
}

/** Fails with the reason when the snippet's port is taken on this machine. */
async function expectPortFree(port: number): Promise<void> {
  const probe = createServer();
  const error = await new Promise<Error | undefined>((resolve) => {
    probe.once("error", resolve);
    probe.listen(port, "127.0.0.1", () => resolve(undefined));
  });
  await new Promise<void>((resolve) => (error ? resolve() : probe.close(() => resolve())));
  expect(error?.message, `the README snippet listens on port ${port}`).toBeUndefined();
}

describeEngine("README: warden run with the scripted model (engine)", () => {
  const checkout = checkoutLikeDir();
  afterAll(async () => {
    checkout.dispose();
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("run-scripted-model: the run edits a copy, diff shows the scripted edit, examples/workspace unchanged", async () => {
    const snippet = docSnippet("README.md", "run-scripted-model");
    expect(snippet).toContain(`127.0.0.1:${DEFAULT_PORT}/v1`);
    await expectPortFree(DEFAULT_PORT);
    const before = tree(join(REPO_ROOT, "examples/workspace"));
    // The one line added: should a command fail (bash -e), the background server still stops, so
    // its open stdout does not hold the test until its timeout.
    const guard = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n";
    const ran = await runDocShell(guard + snippet, {
      cwd: checkout.dir,
      tenant,
      env: { OPENAI_API_KEY: "" },
    });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`OPENAI_BASE_URL=http://127.0.0.1:${DEFAULT_PORT}/v1`);
    expect(ran.stderr).toContain("warden: policy: the default, ");
    expect(ran.stdout).toContain('Done: greet("warden") now returns "Hello, warden! Nice to see you."');
    const diff = ran.stdout.slice(ran.stdout.indexOf("diff --git"));
    expect(diff.split("\n").filter((l) => /^[-+@]/.test(l))).toEqual([
      "--- a/src/greet.py",
      "+++ b/src/greet.py",
      "@@ -1,6 +1,6 @@",
      '-    return f"Hello, {name}!"',
      '+    return f"Hello, {name}! Nice to see you."',
    ]);
    expect(tree(join(checkout.dir, "examples/workspace"))).toEqual(before);
    expect(tree(join(REPO_ROOT, "examples/workspace"))).toEqual(before);
  });
});
