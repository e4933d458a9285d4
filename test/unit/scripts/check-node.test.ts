/**
 * scripts/check-node.sh, which scripts/setup.sh runs first: an older (or missing) node stops setup at
 * once with an error naming package.json's minimum and the fix (scripts/ensure-node.sh 24 and the
 * PATH line). Fake `node` commands stand in for the old one; no Docker, no registry.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO = resolve(import.meta.dirname, "../../..");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { engines: { node: string } };
const work = mkdtempSync(join(tmpdir(), "warden-check-node-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A directory whose `node` runs `body` (bash), to put first on PATH. */
function fakeNode(name: string, body: string): string {
  const dir = join(work, name);
  spawnSync("mkdir", ["-p", dir]);
  writeFileSync(join(dir, "node"), `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(join(dir, "node"), 0o755);
  return dir;
}

function run(script: string, pathFirst: string) {
  return spawnSync("bash", [join(REPO, script)], {
    cwd: REPO,
    encoding: "utf8",
    env: { ...process.env, PATH: `${pathFirst}:${process.env.PATH}` },
  });
}

const fix = [
  "check-node: Node.js 24 (LTS) is one command away: scripts/ensure-node.sh fetches it from the npm registry",
  "check-node: into a cache. Put it first on PATH (add the line to ~/.bashrc to keep it), then run this again:",
  '  export PATH="$(bash scripts/ensure-node.sh 24):$PATH"',
  "",
].join("\n");

describe("scripts/check-node.sh", () => {
  it("package.json states the supported range as >=22.12.0 (Node 20 is past its end of life)", () => {
    expect(pkg.engines.node).toBe(">=22.12.0");
  });

  it("passes silently on the node running this suite (22.12 or newer)", () => {
    const r = run("scripts/check-node.sh", dirname(process.execPath));
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 0,
      stdout: "",
      stderr: "",
    });
  });

  it("refuses Node 20 and 22.11, naming the minimum, the node found and the fix", () => {
    for (const version of ["20.19.5", "22.11.0"]) {
      const dir = fakeNode(`v${version}`, `echo ${version}`);
      const r = run("scripts/check-node.sh", dir);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `check-node: warden needs Node.js >= 22.12.0 (package.json "engines"); the node on PATH is ${version} (${dir}/node).\n${fix}`,
      );
    }
  });

  it("names a node that does not run as missing", () => {
    const r = run("scripts/check-node.sh", fakeNode("broken", "exit 127"));
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `check-node: warden needs Node.js >= 22.12.0 (package.json "engines"); the node on PATH is missing.\n${fix}`,
    );
  });

  it("npm run setup's script stops at once on Node 20: nothing after the check runs (no engine, no npm ci)", () => {
    const r = run("scripts/setup.sh", fakeNode("setup-v20", "echo 20.19.5"));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `check-node: warden needs Node.js >= 22.12.0 (package.json "engines"); the node on PATH is 20.19.5 (${work}/setup-v20/node).\n${fix}`,
    );
  });
});
