/**
 * Optional packages: what only one feature needs is an optional peer dependency of warden
 * (package.json's peerDependencies with peerDependenciesMeta.optional, and devDependencies for the
 * repository's own tests), so `npm install warden` does not bring it. The feature loads it with a
 * dynamic import() where it is used, through importOptional, which turns the module's absence into a
 * PackageMissingError naming the package and the install command. test/unit/util/optional-package.test.ts
 * keeps OPTIONAL_FEATURES and package.json equal; test/package installs the packed package without
 * them and runs the library and `warden exec`.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PackageMissingError } from "../errors.js";

/** A feature that needs optional packages: its name as a user knows it, and each package's tested version. */
export interface OptionalFeature {
  /** What needs the packages, as the error's message starts: "warden serve", "The Kubernetes backend". */
  readonly name: string;
  /** Package name → the exact version warden's tests run with (its devDependencies pin). */
  readonly packages: Readonly<Record<string, string>>;
}

/**
 * Every feature that needs optional packages. peerDependencies holds each package at `^version`,
 * devDependencies at `version`.
 */
export const OPTIONAL_FEATURES = {
  /** `warden serve` (src/server): the HTTP API, its OpenAPI document, metrics and its MCP route. */
  server: {
    name: "warden serve",
    packages: {
      fastify: "5.12.8",
      "@fastify/swagger": "9.9.3",
      "@fastify/type-provider-typebox": "6.3.0",
      "@fastify/websocket": "11.3.6",
      "prom-client": "15.1.3",
      "@modelcontextprotocol/sdk": "1.32.2",
    },
  },
  /** The Kubernetes backend (src/sandbox/kubernetes: `warden serve` with backend kubernetes, `warden gc --namespace`). */
  kubernetes: {
    name: "The Kubernetes backend",
    packages: { "@kubernetes/client-node": "1.4.0" },
  },
  /** `warden run` (src/agent): the agent loop on an OpenAI-compatible model. */
  run: { name: "warden run", packages: { openai: "7.60.0" } },
  /** `warden mcp` (src/mcp): one session's tools as an MCP server over stdio. */
  mcp: { name: "warden mcp", packages: { "@modelcontextprotocol/sdk": "1.32.2" } },
} as const satisfies Record<string, OptionalFeature>;

/** The npm command that installs `feature`'s packages at their tested versions. */
export function installCommand(feature: OptionalFeature): string {
  const specs = Object.entries(feature.packages).map(([name, version]) => `${name}@${version}`);
  return `npm install ${specs.join(" ")}`;
}

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Whether `name` is installed where Node's ESM resolution looks for a bare specifier from warden's
 * own files: `node_modules/<name>/package.json` in this folder or any folder above it.
 */
export function packageInstalled(name: string, from: string = HERE): boolean {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/**
 * Runs `load` (a dynamic import() of an optional package, or of warden's module that imports it)
 * and returns what it resolves to. When it rejects with ERR_MODULE_NOT_FOUND and one of `feature`'s
 * packages is not installed (packageInstalled), rejects with PackageMissingError naming the first
 * such package and the install command (the original error as its cause); any other failure
 * (a package that is there but broken, a missing package of its own) is rethrown as it is.
 */
export async function importOptional<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== "ERR_MODULE_NOT_FOUND") throw err;
    const missing = Object.keys(feature.packages).find((name) => !packageInstalled(name));
    if (missing === undefined) throw err;
    throw new PackageMissingError(feature.name, missing, installCommand(feature), { cause: err });
  }
}
