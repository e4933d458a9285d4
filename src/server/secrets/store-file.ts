/**
 * The secret store's file: one JSON document `{format: "warden-secrets", version: 1, secrets:
 * [...]}` whose entries hold each secret's tenant, name, version, bindings, updatedAt and its value
 * sealed (cipher.ts: iv, tag, ciphertext in base64). Written atomically and durably like session
 * records: a temp file in the same directory (0600), fsync, rename over the file, fsync of the
 * directory; so a crash at any instant leaves the old file or the new one, never a torn one.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";
import { schemaErrorLines } from "../../util/index.js";
import { SecretStoreFileError } from "./errors.js";

const Base64 = Type.String({ pattern: "^[A-Za-z0-9+/]*={0,2}$" });

/** One stored secret. */
const StoredSecretSchema = Type.Object({
  tenant: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  version: Type.Integer({ minimum: 1 }),
  bindings: Type.Array(
    Type.Object({
      hosts: Type.Array(Type.String()),
      ports: Type.Optional(Type.Array(Type.Integer())),
      methods: Type.Optional(Type.Array(Type.String())),
      pathPrefixes: Type.Optional(Type.Array(Type.String())),
      headers: Type.Optional(Type.Array(Type.String())),
    }),
  ),
  updatedAt: Type.String(),
  iv: Base64,
  tag: Base64,
  ciphertext: Base64,
});

const StoreDocumentSchema = Type.Object({
  format: Type.Literal("warden-secrets"),
  version: Type.Literal(1),
  secrets: Type.Array(StoredSecretSchema),
});

/** One entry of the file: a secret's metadata and its sealed value. */
export type StoredSecret = Static<typeof StoredSecretSchema>;

const documentCheck = Compile(StoreDocumentSchema);

/** Prefix of the temp files next to `path` (`secrets.json.tmp-<hex>`). */
function tempPrefix(path: string): string {
  return `${basename(path)}.tmp-`;
}

/**
 * The entries of the store at `path`: none when the file does not exist. Creates its directory
 * (0700) when missing and removes the temp files a crash left in it. Throws SecretStoreFileError naming the file when it is not JSON, not of
 * this shape, or lists one tenant's name twice.
 */
export async function readStoreFile(path: string): Promise<StoredSecret[]> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const name of await readdir(dir)) {
    if (name.startsWith(tempPrefix(path))) await rm(join(dir, name), { force: true });
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new SecretStoreFileError(path, `it cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SecretStoreFileError(path, "it is not JSON");
  }
  if (!documentCheck.Check(doc)) {
    const [first] = schemaErrorLines(documentCheck.Errors(doc), (p) => p || "/");
    throw new SecretStoreFileError(path, first ?? "it is not of the store's shape");
  }
  const seen = new Set<string>();
  for (const s of doc.secrets) {
    const key = `${s.tenant}\n${s.name}`;
    if (seen.has(key)) throw new SecretStoreFileError(path, `it lists ${s.tenant}/${s.name} twice`);
    seen.add(key);
  }
  return doc.secrets;
}

/**
 * Replaces the store at `path` with `secrets`, atomically and durably (temp file 0600 in the same
 * directory, fsync, rename, fsync of the directory). The temp file is removed when any step fails;
 * the error is the file system's.
 */
export async function writeStoreFile(path: string, secrets: readonly StoredSecret[]): Promise<void> {
  const text = `${JSON.stringify({ format: "warden-secrets", version: 1, secrets }, null, 1)}\n`;
  const tmp = join(dirname(path), `${tempPrefix(path)}${randomBytes(6).toString("hex")}`);
  try {
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.writeFile(text, "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
