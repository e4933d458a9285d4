/**
 * Checks a source tree against the layer order of architecture-layers.ts with dependency-cruiser
 * (its resolver and rule engine; type-only imports count like any other): no cycle between files,
 * no import of a unit listed later (so no cycle between folders either), another folder only
 * through its index.ts, the shipped client's narrow imports, and no unit missing from the list.
 */
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";
import { CLIENT_IMPORTS, INDEX_EXCEPTIONS, type Layer } from "./architecture-layers.js";

/** The path pattern of one unit under src/: a folder's files or the file itself. */
function unitPattern(unit: string): string {
  return `^src/(${unit}/|${unit}\\.ts$)`;
}

/** dependency-cruiser's forbidden rules for `layers` (see the module doc). */
export function architectureRules(layers: readonly Layer[]): IForbiddenRuleType[] {
  const rules: IForbiddenRuleType[] = [
    { name: "no-cycle", severity: "error", from: {}, to: { circular: true } },
    {
      name: "through-index",
      comment: "another folder is imported through its index.ts",
      severity: "error",
      from: { path: "^src/([^/]+)/" },
      to: {
        path: "^src/[^/]+/",
        pathNot: ["^src/$1/", "^src/[^/]+/index\\.ts$", ...INDEX_EXCEPTIONS.map((e) => e.to)],
      },
    },
    ...INDEX_EXCEPTIONS.filter((e) => e.typeOnly).map(
      (e): IForbiddenRuleType => ({
        name: "through-index",
        comment: `allowed type-only: ${e.reason}`,
        severity: "error",
        from: { path: e.from },
        to: { path: e.to, dependencyTypesNot: ["type-only"] },
      }),
    ),
    {
      name: "client-imports",
      comment: "the shipped client imports only errors.ts and the server's schemas",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: ["^src/client/", ...CLIENT_IMPORTS] },
    },
  ];
  layers.forEach((layer, i) => {
    const above = layers.slice(i + 1).map((l) => l.unit);
    if (above.length === 0) return;
    rules.push({
      name: "layer-order",
      comment: `${layer.unit} imports only units below it`,
      severity: "error",
      from: { path: unitPattern(layer.unit) },
      to: { path: `^src/(${above.map((u) => `${u}/|${u}\\.ts$`).join("|")})` },
    });
  });
  return rules;
}

/** The unit of a path under src/ (`src/tools/bash.ts` → `tools`, `src/errors.ts` → `errors`). */
export function unitOf(path: string): string {
  const rest = path.replace(/^src\//, "");
  const slash = rest.indexOf("/");
  return slash === -1 ? rest.replace(/\.ts$/, "") : rest.slice(0, slash);
}

/**
 * Violations in the tree at `baseDir` (its src/ and tsconfig.json), one line each:
 * `<rule>: <from> -> <to>` (a cycle lists its files), or `unlisted: <unit>` for a unit of src/
 * that `layers` does not place. Empty when the tree keeps the order.
 */
export async function architectureViolations(baseDir: string, layers: readonly Layer[]): Promise<string[]> {
  const result = await cruise(["src"], {
    baseDir,
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    includeOnly: "^src/",
    validate: true,
    ruleSet: { forbidden: architectureRules(layers) },
  });
  const output = result.output as ICruiseResult;
  const lines = output.summary.violations.map((v) =>
    v.cycle
      ? `${v.rule.name}: ${v.from} -> ${v.cycle.map((c) => c.name).join(" -> ")}`
      : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );
  const listed = new Set(layers.map((l) => l.unit));
  const units = new Set(output.modules.map((m) => unitOf(m.source)));
  for (const unit of [...units].sort()) if (!listed.has(unit)) lines.push(`unlisted: ${unit}`);
  return [...new Set(lines)];
}
