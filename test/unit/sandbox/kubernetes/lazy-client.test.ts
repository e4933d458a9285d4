/**
 * @kubernetes/client-node is loaded on demand (src/sandbox/kubernetes/client.ts): about 25 MB of
 * heap that a process without a cluster must not carry, since every major garbage collection marks
 * it again. So src/ imports it only as types, and loads it only in client.ts: importing the
 * library, the server and every CLI command does not load it (the module is mocked to throw).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";

vi.mock("@kubernetes/client-node", () => {
  throw new Error("@kubernetes/client-node was loaded");
});

const SRC = resolve(import.meta.dirname, "../../../../src");
const PACKAGE = "@kubernetes/client-node";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : /\.[cm]?[jt]s$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/** Whether `specifier` names the package or a file in it. */
const isPackage = (specifier: string) => specifier === PACKAGE || specifier.startsWith(`${PACKAGE}/`);

/**
 * Each statement of `source` that loads PACKAGE (or a file in it), as written: `import … from` and
 * `export … from` but `import type` / `export type`, bare imports, `import(…)` and `require(…)`.
 * A regex scan: the behaviour test below backs it.
 */
function loadingImports(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/\b((?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["'])/g))
    if (isPackage(m[2]!) && !/^(?:import|export)\s+type\b/.test(m[1]!))
      found.push(m[1]!.replace(/\s+/g, " "));
  for (const m of source.matchAll(/\b(?:import|require)\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g))
    if (isPackage(m[1]!)) found.push(m[0]);
  for (const m of source.matchAll(/\bimport\s*["']([^"']+)["']/g)) if (isPackage(m[1]!)) found.push(m[0]);
  return found;
}

describe("@kubernetes/client-node is loaded on demand", () => {
  it("is imported by src/ only as types, and loaded only by sandbox/kubernetes/client.ts", () => {
    const loads: Record<string, string[]> = {};
    for (const file of sourceFiles(SRC)) {
      const found = loadingImports(readFileSync(file, "utf8"));
      if (found.length > 0) loads[relative(SRC, file)] = found;
    }
    expect(loads).toEqual({
      "sandbox/kubernetes/client.ts": [
        `import("${PACKAGE}")`,
        `import("${PACKAGE}/dist/web-socket-handler.js")`,
      ],
    });
  });

  it("is not loaded by importing the library, the server or any CLI command", async () => {
    await expect(import("../../../../src/index.js")).resolves.toBeDefined();
    await expect(import("../../../../src/server/index.js")).resolves.toBeDefined();
    await expect(import("../../../../src/cli/commands/index.js")).resolves.toBeDefined();
    const { loadKubernetesClient } = await import("../../../../src/sandbox/kubernetes/index.js");
    // The mock works: loading it on purpose fails (vitest wraps the factory's error as its cause).
    const err = await loadKubernetesClient().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(String((err?.cause as Error | undefined)?.message)).toBe("@kubernetes/client-node was loaded");
  });
});
