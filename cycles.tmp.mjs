import { cruise } from "dependency-cruiser";
const r = await cruise(["src"], {
  tsConfig: { fileName: "tsconfig.json" },
  tsPreCompilationDeps: true, doNotFollow: { path: "node_modules" }, exclude: { path: "node_modules" },
  ruleSet: { forbidden: [{ name: "no-circular", severity: "error", from: {}, to: { circular: true } }] },
  validate: true,
});
const seen = new Set();
for (const v of r.output.summary.violations) {
  const key = v.cycle ? v.cycle.map(c=>c.name).sort().join() : v.from+v.to;
  if (seen.has(key)) continue; seen.add(key);
  console.log(v.from, "->", (v.cycle??[]).map(c => c.name + (c.dependencyTypes.includes("type-only")?"(t)":"")).join(" -> "));
}
console.log(r.output.summary.totalCruised, r.output.summary.totalDependenciesCruised);
