/**
 * Optional packages (src/util/optional-package.ts): a missing one is a PackageMissingError that names
 * the feature, the package and the install command; anything else fails as it is; and package.json
 * lists every package of OPTIONAL_FEATURES as an optional peer dependency (devDependencies for the
 * repository's tests), none as a dependency.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PackageMissingError } from "../../../src/errors.js";
import {
  importOptional,
  installCommand,
  OPTIONAL_FEATURES,
  packageInstalled,
} from "../../../src/util/index.js";

const ABSENT = "warden-test-absent-package";
const absentFeature = { name: "The test feature", packages: { typebox: "1.4.3", [ABSENT]: "2.0.1" } };

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err,
  );

describe("importOptional", () => {
  it("turns a missing package into PackageMissingError naming it and the feature's install command", async () => {
    const err = await failure(importOptional(absentFeature, () => import(ABSENT)));
    expect(err).toBeInstanceOf(PackageMissingError);
    expect((err as PackageMissingError).code).toBe("PACKAGE_MISSING");
    expect((err as PackageMissingError).packageName).toBe(ABSENT);
    expect((err as PackageMissingError).message).toBe(
      `The test feature needs the package '${ABSENT}', which is not installed (an optional peer dependency of warden). ` +
        `Install it with: npm install typebox@1.4.3 ${ABSENT}@2.0.1`,
    );
    expect(((err as PackageMissingError).cause as { code?: string }).code).toBe("ERR_MODULE_NOT_FOUND");
  });

  it("rethrows a module-not-found error as it is when the feature's packages are all installed", async () => {
    const installed = { name: "The test feature", packages: { typebox: "1.4.3" } };
    const err = await failure(importOptional(installed, () => import(ABSENT)));
    expect(err).not.toBeInstanceOf(PackageMissingError);
    expect((err as { code?: string }).code).toBe("ERR_MODULE_NOT_FOUND");
  });

  it("rethrows any other failure as it is, and resolves what the import resolves", async () => {
    const boom = new Error("boom");
    await expect(importOptional(absentFeature, () => Promise.reject(boom))).rejects.toBe(boom);
    const yaml = await importOptional(absentFeature, () => import("yaml"));
    expect(yaml.parse("a: 1")).toEqual({ a: 1 });
  });

  it("packageInstalled looks for node_modules/<name> from warden's files up", () => {
    expect(packageInstalled("typebox")).toBe(true);
    expect(packageInstalled("@kubernetes/client-node")).toBe(true);
    expect(packageInstalled(ABSENT)).toBe(false);
  });

  it("installCommand pins each package at its tested version", () => {
    expect(installCommand(OPTIONAL_FEATURES.kubernetes)).toBe("npm install @kubernetes/client-node@1.4.0");
    expect(installCommand(OPTIONAL_FEATURES.server)).toBe(
      "npm install fastify@5.12.8 @fastify/swagger@9.9.3 @fastify/type-provider-typebox@6.3.0 @fastify/websocket@11.3.6 prom-client@15.1.3 @modelcontextprotocol/sdk@1.32.2",
    );
  });
});

describe("package.json and OPTIONAL_FEATURES", () => {
  const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
  };
  const tested: Record<string, string> = {};
  for (const feature of Object.values(OPTIONAL_FEATURES))
    for (const [name, version] of Object.entries(feature.packages)) {
      expect(tested[name] ?? version).toBe(version);
      tested[name] = version;
    }
  const names = Object.keys(tested).sort();

  it("lists each optional package as an optional peer at ^version, a devDependency at version, never a dependency", () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(names);
    expect(Object.keys(pkg.peerDependenciesMeta).sort()).toEqual(names);
    for (const name of names) {
      expect(pkg.peerDependencies[name]).toBe(`^${tested[name]}`);
      expect(pkg.peerDependenciesMeta[name]).toEqual({ optional: true });
      expect(pkg.devDependencies[name]).toBe(tested[name]);
      expect(pkg.dependencies[name]).toBeUndefined();
    }
  });
});
