/** docs/processes.md's library example, compiled and run against the built package (run `npm run build` first). */
import { expect, it } from "vitest";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { runDocTypeScript } from "../../helpers/doc-typescript.js";
import { describeEngine } from "../../helpers/engine.js";

describeEngine("docs/processes.md", () => {
  it("processes-library: the example runs and prints what the page says", async () => {
    const result = await runDocTypeScript(docSnippet("docs/processes.md", "processes-library"));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trimEnd()).toBe('exited 0 "tick 1\\ntick 2\\ntick 3\\n" 21');
  }, 120_000);
});
