/**
 * Checks a source tree against the layer order of architecture-layers.ts with dependency-cruiser
 * (its resolver and rule engine; type-only and dynamic imports count like any other): no cycle
 * between files, no import of a unit listed later (so no cycle between folders either), another
 * folder only through its index.ts, the shipped client's narrow imports, no import between two
 * backend folders, no backend folder imported from above the seam (the server), no Docker code reached from a Docker-free folder (directly or transitively,
 * over dependency-cruiser's resolved graph), and no unit missing from the list.
 */
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser";
import {
  BACKEND_BLIND,
  BACKEND_FOLDERS,
  CLIENT_IMPORTS,
  DOCKER_CODE,
  DOCKER_FREE,
  INDEX_EXCEPTIONS,
  type Layer,
} from "./architecture-layers.js";

/** The backend seams checked besides the layers (architecture-layers.ts' data by default). */
export interface Seams {
  /** Folders under src/ none of which may import another. */
  backendFolders: readonly string[];
  /** Folders under src/ that import no backend folder (they use the interface of sandbox/index.ts). */
  backendBlind: readonly string[];
  /** Pattern of Docker code (module paths relative to the tree: src/…, node_modules/…). */
  dockerCode: string;
  /** Folders under src/ that must not reach Docker code, with the modules the search does not enter. */
  dockerFree: readonly { folder: string; notEntered: readonly string[] }[];
}

const SEAMS: Seams = {
  backendFolders: BACKEND_FOLDERS,
  backendBlind: BACKEND_BLIND.map((b) => b.folder),
  dockerCode: DOCKER_CODE,
  dockerFree: DOCKER_FREE,
};

/**
 * The one package the graph keeps besides src/: dockerode, so that reaching it can be seen (its path
 * may lead out of the tree when node_modules is a link, as in a git worktree).
 */
const INCLUDE_ONLY = "^src/|(^|/)node_modules/(@types/)?dockerode/";

/** The path pattern of one unit under src/: a folder's files or the file itself. */
function unitPattern(unit: string): string {
  return `^src/(${unit}/|${unit}\\.ts$)`;
}

/** dependency-cruiser's forbidden rules for `layers` and the backend folders (see the module doc). */
export function architectureRules(layers: readonly Layer[], seams: Seams = SEAMS): IForbiddenRuleType[] {
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
  if (seams.backendFolders.length > 1) {
    const folders = seams.backendFolders.join("|");
    rules.push({
      name: "backend-isolation",
      comment: "a backend folder imports no other backend folder",
      severity: "error",
      from: { path: `^src/(${folders})/` },
      to: { path: `^src/(${folders})/`, pathNot: "^src/$1/" },
    });
  }
  if (seams.backendFolders.length > 0 && seams.backendBlind.length > 0) {
    rules.push({
      name: "backend-seam",
      comment: "a folder above the seam imports no backend folder, only sandbox/index.ts",
      severity: "error",
      from: { path: `^src/(${seams.backendBlind.join("|")})/` },
      to: { path: `^src/(${seams.backendFolders.join("|")})/` },
    });
  }
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
export async function architectureViolations(
  baseDir: string,
  layers: readonly Layer[],
  seams: Seams = SEAMS,
): Promise<string[]> {
  const result = await cruise(["src"], {
    baseDir,
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    includeOnly: INCLUDE_ONLY,
    validate: true,
    ruleSet: { forbidden: architectureRules(layers, seams) },
  });
  const output = result.output as ICruiseResult;
  const lines = output.summary.violations.map((v) =>
    v.cycle
      ? `${v.rule.name}: ${v.from} -> ${v.cycle.map((c) => c.name).join(" -> ")}`
      : `${v.rule.name}: ${v.from} -> ${v.to}`,
  );
  lines.push(...dockerChains(output, seams));
  const listed = new Set(layers.map((l) => l.unit));
  const units = new Set(
    output.modules.filter((m) => m.source.startsWith("src/")).map((m) => unitOf(m.source)),
  );
  for (const unit of [...units].sort()) if (!listed.has(unit)) lines.push(`unlisted: ${unit}`);
  return [...new Set(lines)];
}

/** How a chain names a module: dockerode by its package name, the rest by path. */
function shown(source: string): string {
  return /(^|\/)node_modules\/(@types\/)?dockerode\//.test(source) ? "dockerode" : source;
}

/**
 * `docker-free: a.ts -> b.ts -> dockerode` for every import chain from a file of a Docker-free
 * folder to Docker code, over the resolved graph (each module entered once per folder, so each
 * offending import is named once, by the first chain that reaches it).
 */
export function dockerChains(output: ICruiseResult, seams: Seams): string[] {
  const deps = new Map(output.modules.map((m) => [m.source, m.dependencies.map((d) => d.resolved)]));
  const docker = new RegExp(seams.dockerCode);
  const bad: string[] = [];
  for (const { folder, notEntered } of seams.dockerFree) {
    const seen = new Set<string>();
    const visit = (source: string, chain: string[]) => {
      if (seen.has(source)) return;
      seen.add(source);
      for (const target of deps.get(source) ?? []) {
        const next = [...chain, shown(target)];
        if (docker.test(target)) bad.push(`docker-free: ${next.join(" -> ")}`);
        else if (!notEntered.includes(target)) visit(target, next);
      }
    };
    const starts = [...deps.keys()].filter((s) => s.startsWith(`src/${folder}/`)).sort();
    for (const start of starts) visit(start, [start]);
  }
  return bad;
}
