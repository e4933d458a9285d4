/**
 * docs/network.md's daemon.json block (snippet `daemon-address-pools`) is valid JSON and names the
 * same `default-address-pools` as the daemon.json scripts/ensure-docker.sh writes. The script's own
 * block runs, as written, with /etc/docker replaced by a temporary directory, once with a `runsc`
 * on PATH and once without (the runtimes entry comes and goes), and its file is parsed both times.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docSnippet, REPO_ROOT } from "../../helpers/doc-snippets.js";

const work = mkdtempSync(join(tmpdir(), "warden-daemon-json-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The script's block that writes a fresh daemon.json: from its `if [ ! -f …daemon.json ]` to its `fi`. */
function configBlock(): string {
  const script = readFileSync(join(REPO_ROOT, "scripts/ensure-docker.sh"), "utf8");
  const m = /^if \[ ! -f \/etc\/docker\/daemon\.json \]; then\n[\s\S]*?^fi$/m.exec(script);
  if (!m) throw new Error("scripts/ensure-docker.sh has no block that writes /etc/docker/daemon.json");
  return m[0];
}

/**
 * Runs the block with /etc/docker at a directory of its own and a PATH holding only mkdir, cat and
 * (when `runsc`) an executable named runsc; returns the daemon.json it wrote, parsed.
 */
function writtenConfig(runsc: boolean): Record<string, unknown> {
  const dir = join(work, runsc ? "with-runsc" : "without-runsc");
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  for (const tool of ["mkdir", "cat"]) {
    const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
    symlinkSync(found, join(bin, tool));
  }
  if (runsc) writeFileSync(join(bin, "runsc"), "#!/bin/sh\n", { mode: 0o755 });
  const etc = join(dir, "etc-docker");
  const block = configBlock().replaceAll("/etc/docker", etc);
  const r = spawnSync("/bin/bash", ["--norc", "-euo", "pipefail", "-c", block], {
    encoding: "utf8",
    env: { PATH: bin },
    // Not a socket on stdin: bash would take itself for rshd's child and read the system bashrc.
    stdio: ["ignore", "pipe", "pipe"],
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return JSON.parse(readFileSync(join(etc, "daemon.json"), "utf8")) as Record<string, unknown>;
}

describe("the engine's address pools: docs/network.md and scripts/ensure-docker.sh", () => {
  const doc = JSON.parse(docSnippet("docs/network.md", "daemon-address-pools")) as Record<string, unknown>;

  it("the doc's block is a daemon.json holding only default-address-pools: 172.16.0.0/12 in /24s", () => {
    expect(doc).toEqual({ "default-address-pools": [{ base: "172.16.0.0/12", size: 24 }] });
  });

  it("the script writes valid JSON with the doc's pools, and runsc as a runtime when it has one", () => {
    const withRunsc = writtenConfig(true);
    expect(withRunsc["default-address-pools"]).toEqual(doc["default-address-pools"]);
    expect(withRunsc.runtimes).toEqual({
      runsc: { path: join(work, "with-runsc", "bin", "runsc"), runtimeArgs: ["--network=none"] },
    });
    const without = writtenConfig(false);
    expect(without).toEqual(doc);
  });
});
