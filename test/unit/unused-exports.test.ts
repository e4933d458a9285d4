/**
 * No export of src/ goes unused (issue 38): knip (knip.json) follows the imports from every entry
 * (the package's entry points, the CLI, the worker modules started by path, the OpenAPI document
 * scripts/openapi.mjs loads from dist/, and every test, bench and example file) and lists each
 * exported name nothing imports. A name only its own file uses is not exported; a folder index
 * re-exports only what another folder imports.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("src/'s exports", () => {
  it("are each imported somewhere (knip --include exports,types)", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "node_modules/knip/bin/knip.js",
        "--include",
        "exports,types",
        "--reporter",
        "compact",
        "--no-progress",
      ],
      { maxBuffer: 1 << 20 },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }));
    expect(stdout.trim()).toBe("");
  }, 120_000);
});
