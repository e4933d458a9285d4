/**
 * The channel's wire protocol (src/sandbox/channel/protocol/) carries over any byte stream: a
 * Docker attach, or a Kubernetes Pod attach (src/sandbox/kubernetes/). So nothing either imports,
 * directly or through other modules, may be Docker code: dockerode, the engine module, the Docker
 * transport (channel/docker/) or the docker-exec path.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../../../../src");
/**
 * Folders free of Docker code, each with the modules its scan does not enter: the Kubernetes
 * sandbox validates options with the shared resolveSandboxOptions, whose network check comes
 * from egress/ (the gateway there is Docker; a Kubernetes sandbox refuses allowlist networks).
 */
const DOCKER_FREE_DIRS: [string, string[]][] = [
  ["sandbox/channel/protocol", []],
  ["sandbox/kubernetes", ["egress/index.ts"]],
];

/** Module specifiers of one file: static imports and re-exports (type-only included), and dynamic imports. */
function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']/g))
    found.push(m[1]!);
  for (const m of source.matchAll(/(?:^|\n)\s*import\s*["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]!);
  return found;
}

/** Why `target` (a package name or a src/-relative path) is Docker code, or null. */
function dockerReason(target: string): string | null {
  if (target === "dockerode" || target.startsWith("dockerode/")) return "the dockerode package";
  if (target === "sandbox/engine.ts") return "the engine module";
  if (target.startsWith("sandbox/channel/docker/")) return "the channel's Docker transport";
  if (target.startsWith("sandbox/docker-exec/")) return "the docker-exec path";
  return null;
}

/** Every import chain from the files of `dir` that reaches Docker code, as "a.ts -> b.ts -> dockerode". */
function dockerChains(dir: string, notEntered: readonly string[]): string[] {
  const bad: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) {
        const why = dockerReason(spec);
        if (why) bad.push(`${[...chain, spec].join(" -> ")} (${why})`);
        continue;
      }
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      const rel = relative(SRC, target);
      const why = dockerReason(rel);
      if (why) bad.push(`${[...chain, rel].join(" -> ")} (${why})`);
      else if (!notEntered.includes(rel)) visit(target, [...chain, rel]);
    }
  };
  for (const name of readdirSync(join(SRC, dir)).filter((n) => n.endsWith(".ts"))) {
    const file = join(SRC, dir, name);
    visit(file, [relative(SRC, file)]);
  }
  return bad;
}

describe("channel protocol stays independent of Docker", () => {
  it.each(DOCKER_FREE_DIRS)(
    "no file of %s imports Docker code, directly or through another module",
    (dir, notEntered) => {
      expect(dockerChains(dir, notEntered)).toEqual([]);
    },
  );

  it("the import scan sees every import form (else the check above would pass vacuously)", () => {
    const source = [
      'import type Docker from "dockerode";',
      'import { a,\n  b } from "../docker/attach.js";',
      'export { c } from "./c.js";',
      'import "./side-effect.js";',
      'const m = await import("../../engine.js");',
    ].join("\n");
    expect(importSpecifiers(source)).toEqual([
      "dockerode",
      "../docker/attach.js",
      "./c.js",
      "./side-effect.js",
      "../../engine.js",
    ]);
  });
});
