/**
 * The package as a user gets it: `npm pack` holds dist/, bin/, the sandbox image's context and the
 * policies; installed from the tarball into an empty project it brings none of the optional peer
 * dependencies (OPTIONAL_FEATURES), and without them its types compile under TypeScript's default
 * checks (no skipLibCheck) with the documented public names and the README's library and client
 * examples (`library-session`, `client-ts`), the library and the CLI run (a policy decision; without
 * --policy the CLI finds the package's own policies/default.yaml; `warden exec` against the engine), and `warden serve`,
 * `mcp`, `run` and `gc --namespace` stop with PACKAGE_MISSING and the install command. Installing
 * what that command names makes `warden serve` work.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { installCommand, OPTIONAL_FEATURES } from "../../src/util/index.js";
import { docSnippet } from "../helpers/doc-snippets.js";
import { describeEngine } from "../helpers/engine.js";

const repo = resolve(import.meta.dirname, "../..");
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
/** Runs the installed CLI; its exit status and output, whatever the status. */
const warden = (project: string, ...args: string[]) => {
  const r = spawnSync("node", ["node_modules/warden/bin/warden.js", ...args], {
    cwd: project,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, OPENAI_API_KEY: "" },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};
const missing = (feature: { name: string; packages: Record<string, string> }, name: string) =>
  `warden: PACKAGE_MISSING: ${feature.name} needs the package '${name}', which is not installed (an optional peer dependency of warden). ` +
  `Install it with: ${installCommand(feature)}\n`;
const optionalNames = [
  ...new Set(Object.values(OPTIONAL_FEATURES).flatMap((f) => Object.keys(f.packages))),
].sort();

let files: string[] = [];
let project = "";

beforeAll(() => {
  run("npm", ["run", "build"], repo);
  const out = mkdtempSync(join(tmpdir(), "warden-pack-"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], repo)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  files = packed[0]!.files.map((f) => f.path);
  project = mkdtempSync(join(tmpdir(), "warden-consumer-"));
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", join(out, packed[0]!.filename)],
    project,
  );
}, 600_000);

describe("the packed package, installed without its optional packages", () => {
  it("holds what it needs, and brings none of the optional packages", () => {
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
    expect(optionalNames.filter((name) => existsSync(join(project, "node_modules", name)))).toEqual([]);
  });

  it("type-checks with default settings: the core API and the README's library and client examples", () => {
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
        'const options: SessionOptions = { sandbox: { workspace: { hostPath: ".", mode: "copy", exclude: ["node_modules/"] } } };',
        "const open: (o: SessionOptions) => Promise<Session> = createSession;",
        "const tools = [createEditTool(), createWriteTool(), createGrepTool(), createFindTool()].map((t) => t.name);",
        'console.log(JSON.stringify({ tools, open: typeof open, error: new WardenError("NOT_FOUND", "x").code, options: options.sandbox?.workspace?.mode }));',
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
  });

  it("runs the core: the library's import and a policy decision, and the CLI's policy check", () => {
    const script = [
      'import * as w from "warden";',
      'const policy = await w.loadPolicy(["node_modules/warden/policies/default.yaml"]);',
      'const request = { tool: "bash", args: { command: "git status && rm -rf src" } };',
      "const decided = await w.evaluate(policy, request, { resolvePath: async (p) => p });",
      'console.log(Object.keys(w).includes("createEditTool"), typeof w.createSession, decided.decision);',
    ].join("\n");
    expect(run("node", ["--input-type=module", "-e", script], project)).toBe("true function deny\n");
    expect(warden(project, "--version").stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const check = warden(project, "policy", "check", "node_modules/warden/policies/default.yaml");
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: "" });
    // Without --policy the installed CLI applies its own shipped default policy and names it (the
    // flag error after the notice stops it before any sandbox is made).
    const cli = warden(project, "exec", "ls", "{}", "--net-ca-bundle", "/x");
    expect(cli.status).toBe(2);
    expect(cli.stderr.split("\n")[0]).toBe(
      `warden: policy: the default, ${join(realpathSync(project), "node_modules/warden/policies/default.yaml")} (secrets and rm denied; workspace reads, copy-mode edits and common read-only and build/test commands allowed; anything else asks); choose another with --policy FILE, or allow every call with --policy allow-all`,
    );
  });

  it("warden serve, mcp, run and gc --namespace stop with PACKAGE_MISSING and the install command", () => {
    const { server, mcp, run: agent, kubernetes } = OPTIONAL_FEATURES;
    expect(warden(project, "serve", "--hash-key", "k")).toEqual({
      status: 2,
      stdout: "",
      stderr: missing(server, "fastify"),
    });
    expect(warden(project, "mcp")).toEqual({
      status: 2,
      stdout: "",
      stderr: missing(mcp, "@modelcontextprotocol/sdk"),
    });
    expect(warden(project, "run", "--task", "t", "--base-url", "http://127.0.0.1:9/v1")).toEqual({
      status: 2,
      stdout: "",
      stderr: missing(agent, "openai"),
    });
    expect(warden(project, "gc", "--namespace", "warden-test")).toEqual({
      status: 2,
      stdout: "",
      stderr: missing(kubernetes, "@kubernetes/client-node"),
    });
  });
});

describeEngine("the packed package's CLI without its optional packages, against the engine", () => {
  it("warden exec runs a tool call in a sandbox", () => {
    const image = process.env.WARDEN_TEST_IMAGE ? ["--image", process.env.WARDEN_TEST_IMAGE] : [];
    const exec = warden(
      project,
      "exec",
      ...image,
      "--policy",
      "allow-all",
      "bash",
      '{"command":"echo from-the-sandbox"}',
    );
    expect({ status: exec.status, stdout: exec.stdout }).toEqual({ status: 0, stdout: "from-the-sandbox\n" });
  });
});

describe("the packed package with the server's optional packages added", () => {
  it("installs them with the command PACKAGE_MISSING named, and warden serve then loads", () => {
    const [npm, ...args] = installCommand(OPTIONAL_FEATURES.server).split(" ");
    run(npm!, [...args, "--no-audit", "--no-fund", "--prefer-offline"], project);
    const hashed = warden(project, "serve", "--hash-key", "k");
    expect({ status: hashed.status, stderr: hashed.stderr }).toEqual({ status: 0, stderr: "" });
    expect(hashed.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    run(join(repo, "node_modules/.bin/tsc"), ["-p", "."], project);
  });
});
