import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadPolicy, runPolicyTests } from "../../../src/policy/index.js";

const dir = new URL("../../../policies/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));

describe("shipped policies", () => {
  it("ships default, strict, readonly and ci", () => {
    expect(files.sort()).toEqual(
      expect.arrayContaining(["ci.yaml", "default.yaml", "readonly.yaml", "strict.yaml"]),
    );
  });

  it.each(files)("%s is valid and passes its own tests", async (file) => {
    const policy = await loadPolicy([new URL(file, dir).pathname]);
    const layer = policy.layers[0];
    if (!layer) throw new Error("no layer");
    expect(layer.tests.length).toBeGreaterThanOrEqual(5);
    const report = await runPolicyTests(layer);
    expect(report.failures.map((f) => f.message)).toEqual([]);
  });
});
