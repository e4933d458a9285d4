/**
 * The README's server journey (curl, then the TypeScript client) and its library example, run as
 * written. The server is a real `warden serve` with test tenants on a free port
 * (test/helpers/serve-tenants.ts) instead of the example config's port 8080 and tenant acme: the
 * snippets' `localhost:8080` / `http://127.0.0.1:8080` and `demo-key-acme` are replaced by its URL
 * and a test tenant's key, and nothing else. Needs `npm run build` and the sandbox image.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { runDocTypeScript } from "../../helpers/doc-typescript.js";
import { describeEngine } from "../../helpers/engine.js";
import { type ServedTenants, serveTenants } from "../../helpers/serve-tenants.js";

/** tsc type-checks the package's and its dependencies' declarations: minutes on a loaded 2-core machine. */
const COMPILE_AND_RUN_MS = 400_000;

/** `text` with each `from` replaced by its `to`; each must occur, so a changed snippet fails here. */
function pointed(text: string, pairs: Array<[string, string]>): string {
  let out = text;
  for (const [from, to] of pairs) {
    expect(out, `the snippet names ${from}`).toContain(from);
    out = out.replaceAll(from, to);
  }
  return out;
}

describeEngine("README: warden serve with curl and warden/client; the library (engine)", () => {
  let served: ServedTenants;
  beforeAll(async () => {
    served = await serveTenants(`test-docs-serve-${process.pid}`);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("serve-curl: creates a session, runs the call, shows the change, deletes the session", async () => {
    const host = served.url.replace(/^http:\/\//, "");
    const script = pointed(docSnippet("README.md", "serve-curl"), [
      ["localhost:8080", host],
      ["demo-key-acme", served.keys.main],
    ]);
    const result = await runDocShell(script, { cwd: tmpdir(), tenant: "test-docs-unused" });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('"results"');
    expect(result.stdout).toContain("hello.txt");
    expect(result.stdout).toContain("+++ b/hello.txt");
    expect(result.stdout).toContain("+hello");
  });

  it(
    "client-ts: compiles against the package and prints the call's result and the patch",
    async () => {
      const code = pointed(docSnippet("README.md", "client-ts"), [
        ["http://127.0.0.1:8080", served.url],
        ["demo-key-acme", served.keys.main],
      ]);
      const result = await runDocTypeScript(code);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain("hello.txt");
      expect(result.stdout).toContain("+++ b/hello.txt");
    },
    COMPILE_AND_RUN_MS,
  );

  it(
    "library-session: runs ls in a copy of ./repo and closes the session",
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "warden-docs-lib-"));
      try {
        mkdirSync(join(cwd, "repo"));
        writeFileSync(join(cwd, "repo/hello.txt"), "hello\n");
        const result = await runDocTypeScript(docSnippet("README.md", "library-session"), { cwd });
        expect(result.exitCode, result.stderr).toBe(0);
        expect(result.stdout).toContain("hello.txt");
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    COMPILE_AND_RUN_MS,
  );

  it(
    "docs/library.md library-options: the example runs; ls lists the copy",
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "warden-docs-lib-"));
      try {
        mkdirSync(join(cwd, "repo"));
        writeFileSync(join(cwd, "repo/hello.txt"), "hello\n");
        const result = await runDocTypeScript(docSnippet("docs/library.md", "library-options"), { cwd });
        expect(result.exitCode, result.stderr).toBe(0);
        expect(result.stdout).toContain("hello.txt");
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    COMPILE_AND_RUN_MS,
  );
});
