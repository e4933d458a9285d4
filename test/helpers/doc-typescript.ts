/**
 * Compiles and runs a documentation TypeScript snippet (test/helpers/doc-snippets.ts) as a consumer
 * of the package would: in a fresh ES module project whose `warden` dependency is this checkout
 * (`node_modules/warden` links to it, so its package.json `exports` and dist/ are what resolves:
 * run `npm run build` first), type-checked by TypeScript's default strict settings, then run with node.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { omitUndefined } from "../../src/util/index.js";
import type { DocShellResult } from "./doc-shell.js";
import { REPO_ROOT } from "./doc-snippets.js";

/**
 * Writes `code` as snippet.ts in a new project, compiles it with the checkout's tsc (a compile
 * error throws, with tsc's output) and runs the result in `cwd` (default: the project).
 */
export async function runDocTypeScript(
  code: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<DocShellResult> {
  const project = mkdtempSync(join(tmpdir(), "warden-docs-ts-"));
  try {
    mkdirSync(join(project, "node_modules/@types"), { recursive: true });
    symlinkSync(REPO_ROOT, join(project, "node_modules/warden"));
    // What an install of the package brings: its @types dependencies (a consumer's TypeScript loads
    // every node_modules/@types package), plus @types/node, which TypeScript users add themselves.
    const { dependencies } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const name of ["@types/node", ...Object.keys(dependencies).filter((d) => d.startsWith("@types/"))]) {
      symlinkSync(join(REPO_ROOT, "node_modules", name), join(project, "node_modules", name));
    }
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "docs-consumer", private: true, type: "module" }),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          strict: true,
          outDir: "out",
        },
        files: ["snippet.ts"],
      }),
    );
    writeFileSync(join(project, "snippet.ts"), `${code}export {};\n`);
    const tsc = await execa(join(REPO_ROOT, "node_modules/.bin/tsc"), ["-p", "."], {
      cwd: project,
      reject: false,
    });
    if (tsc.exitCode !== 0) throw new Error(`the snippet does not compile:\n${tsc.stdout}${tsc.stderr}`);
    const run = await execa("node", [join(project, "out/snippet.js")], {
      cwd: options.cwd ?? project,
      ...omitUndefined({ env: options.env }),
      reject: false,
      stdin: "ignore",
      timeout: 180_000,
    });
    return { stdout: run.stdout, stderr: run.stderr, exitCode: run.exitCode ?? -1 };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}
