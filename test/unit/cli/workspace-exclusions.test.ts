/** What copy mode leaves out for the CLI: --exclude, .wardenignore, and files the policy denies reading. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceExclusions } from "../../../src/cli/flags/workspace-exclusions.js";
import { excludeMatcher } from "../../../src/sandbox/workspace-exclude.js";

describe("workspace exclusions", () => {
  it("joins --exclude and .wardenignore, and excludes what policies/default.yaml denies reading", async () => {
    const root = mkdtempSync(join(tmpdir(), "warden-excl-"));
    writeFileSync(join(root, ".wardenignore"), "# data\ndata/\n*.sqlite\n");
    const got = await workspaceExclusions(root, { exclude: ["*.log"], policy: ["policies/default.yaml"] });
    expect(got.exclude).toEqual(["*.log", "# data", "data/", "*.sqlite", ""]);
    const excluded = excludeMatcher(got.exclude, got.excludeIf)!;
    const left = [".env", "config/.env.prod", "id_rsa", ".git/config", "data/", "a.sqlite", "x.log"];
    expect([...left, "src/app.ts", ".git/"].filter((p) => excluded(p))).toEqual(left);
  });

  it("excludes nothing without flags, .wardenignore or policy", async () => {
    const root = mkdtempSync(join(tmpdir(), "warden-excl-"));
    const got = await workspaceExclusions(root, {});
    expect(got).toEqual({ exclude: [] });
    expect(excludeMatcher(got.exclude, got.excludeIf)).toBeUndefined();
  });
});
