import { readFileSync } from "node:fs";
import { it } from "vitest";
import { evaluate, lexicalContext, loadPolicy } from "../../../src/policy/index.js";
it("probe", async () => {
  const cmds = readFileSync("/tmp/corpus/cmds.txt", "utf8").split("\n").filter(Boolean);
  for (const name of ["default", "readonly"]) {
    const p = await loadPolicy([`/work/wt-corpus/policies/${name}.yaml`]);
    for (const c of cmds) {
      const d = await evaluate(p, { tool: "bash", args: { command: c } }, lexicalContext);
      console.log(`${name} | ${c} => ${d.decision} | ${d.part} | ${d.reason}`);
    }
  }
});
