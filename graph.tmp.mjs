import { cruise } from "dependency-cruiser";
const r = await cruise(["src"], {
  tsConfig: { fileName: "tsconfig.json" },
  tsPreCompilationDeps: true, doNotFollow: { path: "node_modules" }, exclude: { path: "node_modules" },
});
const folder = (f) => { const p = f.replace(/^src\//, "").split("/"); return p.length === 1 ? p[0].replace(/\.ts$/, "") : p[0]; };
const edges = new Map();
let cross = 0, around = 0;
for (const m of r.output.modules) {
  if (!m.source.startsWith("src/")) continue;
  for (const d of m.dependencies) {
    if (!d.resolved.startsWith("src/")) continue;
    const a = folder(m.source), b = folder(d.resolved);
    if (a === b) continue;
    cross++;
    const viaIndex = /\/index\.ts$/.test(d.resolved) && d.resolved.split("/").length === 3;
    if (!viaIndex && !["errors","version","index"].includes(b)) around++;
    const k = a + " -> " + b;
    if (!edges.has(k)) edges.set(k, []);
    edges.get(k).push(`${m.source} -> ${d.resolved}${d.dependencyTypes.includes("type-only")?" (type)":""}`);
  }
}
console.log("cross", cross, "around", around);
for (const [k, v] of [...edges].sort()) { console.log(k, v.length); if (process.argv[2]) for (const x of v) console.log("   ", x); }
