/**
 * The package as a user gets it: `npm pack` holds dist/, bin/, the sandbox image's context and the
 * policies; installed from the tarball into an empty project, its types compile under TypeScript's
 * default checks (no skipLibCheck) with the documented public names and the README's library and
 * client examples (`library-session`, `client-ts`), and it runs (import and CLI; without --policy
 * the CLI finds the package's own policies/default.yaml).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { docSnippet } from "../helpers/doc-snippets.js";

const repo = resolve(import.meta.dirname, "../..");
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

it("npm pack installs into an empty project, type-checks with default settings and runs", () => {
  run("npm", ["run", "build"], repo);
  const out = mkdtempSync(join(tmpdir(), "warden-pack-"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], repo)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const files = packed[0]!.files.map((f) => f.path);
  for (const needed of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/cli/main.js",
    "bin/warden.js",
    "images/sandbox/Dockerfile",
    "images/gateway/Dockerfile",
    "policies/default.yaml",
  ])
    expect(files).toContain(needed);
  expect(files.some((f) => f.startsWith("src/") || f.startsWith("test/"))).toBe(false);

  const project = mkdtempSync(join(tmpdir(), "warden-consumer-"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", join(out, packed[0]!.filename)],
    project,
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        noEmit: true,
      },
    }),
  );
  writeFileSync(
    join(project, "index.ts"),
    [
      'import { createSession, createEditTool, createWriteTool, createGrepTool, createFindTool, WardenError, type Session, type SessionOptions } from "warden";',
      'const options: SessionOptions = { workspace: { hostPath: ".", mode: "copy", exclude: ["node_modules/"] } };',
      "const open: (o: SessionOptions) => Promise<Session> = createSession;",
      "const tools = [createEditTool(), createWriteTool(), createGrepTool(), createFindTool()].map((t) => t.name);",
      'console.log(JSON.stringify({ tools, open: typeof open, error: new WardenError("NOT_FOUND", "x").code, options: options.workspace?.mode }));',
      "",
    ].join("\n"),
  );
  // The README's library and client examples compile as they are shown, against the installed tarball.
  writeFileSync(
    join(project, "readme-library.ts"),
    `${docSnippet("README.md", "library-session")}export {};\n`,
  );
  writeFileSync(join(project, "readme-client.ts"), `${docSnippet("README.md", "client-ts")}export {};\n`);
  run(join(repo, "node_modules/.bin/tsc"), ["-p", "."], project);
  const printed = run(
    "node",
    [
      "--input-type=module",
      "-e",
      'import * as w from "warden"; console.log(Object.keys(w).includes("createEditTool"), typeof w.createSession)',
    ],
    project,
  );
  expect(printed).toBe("true function\n");
  expect(run("node", ["node_modules/warden/bin/warden.js", "--version"], project).trim()).toMatch(
    /^\d+\.\d+\.\d+/,
  );
  // Without --policy the installed CLI applies its own shipped default policy and names it (the
  // flag error after the notice stops it before any sandbox is made).
  const cli = spawnSync(
    "node",
    ["node_modules/warden/bin/warden.js", "exec", "ls", "{}", "--net-ca-bundle", "/x"],
    { cwd: project, encoding: "utf8" },
  );
  expect(cli.status).toBe(2);
  expect(cli.stderr.split("\n")[0]).toBe(
    `warden: policy: the default, ${join(realpathSync(project), "node_modules/warden/policies/default.yaml")} (secrets and rm denied; workspace reads, copy-mode edits and common read-only and build/test commands allowed; anything else asks); choose another with --policy FILE, or allow every call with --policy allow-all`,
  );
});
