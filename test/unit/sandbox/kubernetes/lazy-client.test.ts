/**
 * @kubernetes/client-node is loaded on demand (src/sandbox/kubernetes/client.ts): about 27 MB of
 * heap that a process without a cluster must not carry, since every major garbage collection marks
 * it again. So src/ imports it only as types, and loads it only in client.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../../../src");
const PACKAGE = "@kubernetes/client-node";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Each import of PACKAGE in `source` that loads it (not `import type` / `export type`), as written. */
function loadingImports(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:^|\n)\s*((?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["'])/g))
    if (m[2] === PACKAGE && !/^(?:import|export)\s+type\b/.test(m[1]!))
      found.push(m[1]!.replace(/\s+/g, " "));
  for (const m of source.matchAll(/(?:^|\n)\s*import\s*["']([^"']+)["']/g))
    if (m[1] === PACKAGE) found.push(`import "${PACKAGE}"`);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g))
    if (m[1] === PACKAGE) found.push(`import("${PACKAGE}")`);
  return found;
}

describe("@kubernetes/client-node is loaded on demand", () => {
  it("is imported by src/ only as types, and loaded only by sandbox/kubernetes/client.ts", () => {
    const loads: Record<string, string[]> = {};
    for (const file of sourceFiles(SRC)) {
      const found = loadingImports(readFileSync(file, "utf8"));
      if (found.length > 0) loads[relative(SRC, file)] = found;
    }
    expect(loads).toEqual({ "sandbox/kubernetes/client.ts": [`import("${PACKAGE}")`] });
  });
});
