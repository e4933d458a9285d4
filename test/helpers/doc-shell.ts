/**
 * Runs a documentation shell snippet (test/helpers/doc-snippets.ts) as a reader would: bash, in a
 * directory laid out like a checkout (copies of examples/ and policies/, or the repository itself),
 * with `warden` on PATH running this checkout's bin/warden.js (so `npm run build` first). The one
 * thing added to what the snippet says: the sessions of `exec`, `replay`, `run` and `mcp` carry the
 * test's tenant label (`--tenant`), so the test can find and sweep what they leave.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { REPO_ROOT } from "./doc-snippets.js";

/** A temp directory with copies of the checkout's examples/ and policies/; `dispose` removes it. */
export function checkoutLikeDir(): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), "warden-docs-"));
  for (const part of ["examples", "policies"])
    cpSync(join(REPO_ROOT, part), join(dir, part), { recursive: true });
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What a snippet printed and how it ended. */
export interface DocShellResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Runs `script` with `bash -e` in `cwd`. `tenant` labels the sessions it starts; `env` adds
 * variables (e.g. OPENAI_BASE_URL). WARDEN_HOME (default transcripts, copy-mode sessions' saved
 * patches) is a temporary directory removed afterwards, unless `env` names one. Never throws for a
 * failing command: the caller checks exitCode.
 */
export async function runDocShell(
  script: string,
  options: { cwd: string; tenant: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<DocShellResult> {
  const bin = mkdtempSync(join(tmpdir(), "warden-docs-bin-"));
  try {
    writeFileSync(
      join(bin, "warden"),
      [
        "#!/usr/bin/env bash",
        'case "$1" in',
        `  exec|replay|run|mcp) exec node ${JSON.stringify(join(REPO_ROOT, "bin/warden.js"))} "$@" --tenant "$WARDEN_DOCS_TENANT" ;;`,
        `  *) exec node ${JSON.stringify(join(REPO_ROOT, "bin/warden.js"))} "$@" ;;`,
        "esac",
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    const run = await execa("bash", ["-e", "-c", script], {
      cwd: options.cwd,
      env: {
        WARDEN_HOME: join(bin, "warden-home"),
        // The docs show plain text; picocolors colours output whenever CI is set (as in CI runs).
        NO_COLOR: "1",
        ...options.env,
        WARDEN_DOCS_TENANT: options.tenant,
        PATH: `${bin}:${process.env.PATH ?? ""}`,
      },
      reject: false,
      stdin: "ignore",
      timeout: options.timeoutMs ?? 300_000,
    });
    return { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode ?? -1 };
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}
