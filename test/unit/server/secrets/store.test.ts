/**
 * The secret store (src/server/secrets): its key file, AES-256-GCM round trip bound to tenant,
 * name and version, a wrong key or an altered entry refusing the start, and atomic writes.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SecretsConfig } from "../../../../src/server/config/index.js";
import { openSecret, sealSecret } from "../../../../src/server/secrets/cipher.js";
import {
  SecretKeyError,
  SecretStore,
  SecretStoreFileError,
  sessionSecrets,
} from "../../../../src/server/secrets/index.js";
import { loadSecretKey } from "../../../../src/server/secrets/key.js";

const VALUE = "ghp_s3cr3t-VALUE-for-tests";
const binding = [{ hosts: ["api.github.com"] }];

describe("secret store", () => {
  let dir: string;
  let config: SecretsConfig;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-secrets-"));
    config = { keyFile: join(dir, "key"), storeFile: join(dir, "state", "secrets.json"), maxPerTenant: 3 };
    await writeFile(config.keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const stored = async () =>
    JSON.parse(await readFile(config.storeFile, "utf8")) as { secrets: Record<string, unknown>[] };

  describe("key file", () => {
    it("reads 64 hex digits and base64 (padded or not, URL-safe), trimmed", async () => {
      const key = randomBytes(32);
      for (const text of [
        key.toString("hex"),
        ` ${key.toString("hex").toUpperCase()}\n`,
        key.toString("base64"),
        key.toString("base64url"),
      ]) {
        await writeFile(config.keyFile, text);
        expect((await loadSecretKey(config.keyFile)).equals(key)).toBe(true);
      }
    });

    it("refuses a key of another length, naming the field and file but not quoting it", async () => {
      await writeFile(config.keyFile, randomBytes(16).toString("hex"));
      const err = await loadSecretKey(config.keyFile).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SecretKeyError);
      expect((err as SecretKeyError).code).toBe("INVALID_ARGUMENT");
      expect((err as Error).message).toBe(
        `secrets.keyFile '${config.keyFile}' does not hold a key (32 characters after trimming whitespace): it must hold 32 random bytes written as 64 hex digits or 44 base64 characters ('openssl rand -base64 32 > FILE').`,
      );
    });

    it("refuses a missing key file, naming it", async () => {
      const err = await SecretStore.open({ ...config, keyFile: join(dir, "nope") }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SecretKeyError);
      expect((err as Error).message).toContain(
        `secrets.keyFile '${join(dir, "nope")}' cannot be read (ENOENT)`,
      );
    });
  });

  it("round-trips a value, bumps the version at each put and forgets it at delete", async () => {
    const store = await SecretStore.open(config, () => Date.parse("2026-12-07T12:00:00Z"));
    expect(store.list("acme")).toEqual([]);
    const first = await store.put("acme", "GITHUB_TOKEN", VALUE, binding);
    expect(first).toEqual({
      created: true,
      secret: {
        name: "GITHUB_TOKEN",
        version: 1,
        bindings: [{ hosts: ["api.github.com"], ports: [443], headers: ["authorization"] }],
        updatedAt: "2026-12-07T12:00:00.000Z",
      },
    });
    expect(store.value("acme", "GITHUB_TOKEN")).toBe(VALUE);
    const second = await store.put("acme", "GITHUB_TOKEN", "rotated", [
      { hosts: ["*.github.com"], ports: [8443] },
    ]);
    expect(second.created).toBe(false);
    expect(second.secret.version).toBe(2);
    expect(store.value("acme", "GITHUB_TOKEN")).toBe("rotated");
    // A new store over the same files reads what was written.
    const reopened = await SecretStore.open(config);
    expect(reopened.value("acme", "GITHUB_TOKEN")).toBe("rotated");
    expect(reopened.list("acme")).toEqual([second.secret]);
    expect(await store.delete("acme", "GITHUB_TOKEN")).toBe(true);
    expect(await store.delete("acme", "GITHUB_TOKEN")).toBe(false);
    expect(store.value("acme", "GITHUB_TOKEN")).toBeUndefined();
    expect((await SecretStore.open(config)).list("acme")).toEqual([]);
  });

  it("keeps tenants apart: a name of one tenant is not another's", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "TOKEN", "acme-value", binding);
    await store.put("beta", "TOKEN", "beta-value", binding);
    expect(store.value("acme", "TOKEN")).toBe("acme-value");
    expect(store.value("beta", "TOKEN")).toBe("beta-value");
    expect(await store.delete("beta", "TOKEN")).toBe(true);
    expect(store.value("acme", "TOKEN")).toBe("acme-value");
    expect(store.list("beta")).toEqual([]);
  });

  it("stores no value in clear: the file holds neither it nor its base64", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "GITHUB_TOKEN", VALUE, binding);
    const text = await readFile(config.storeFile, "utf8");
    expect(text).not.toContain(VALUE);
    expect(text).not.toContain(Buffer.from(VALUE).toString("base64"));
    expect(Object.keys((await stored()).secrets[0]!).sort()).toEqual(
      ["bindings", "ciphertext", "iv", "name", "tag", "tenant", "updatedAt", "version"].sort(),
    );
  });

  it("refuses to open with a wrong key, naming the key file and the store: never an empty store", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "A", "one", binding);
    await store.put("acme", "B", "two", binding);
    await writeFile(config.keyFile, randomBytes(32).toString("hex"));
    const err = await SecretStore.open(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretKeyError);
    expect((err as Error).message).toBe(
      `secrets.keyFile '${config.keyFile}' does not open the secret store '${config.storeFile}': none of its 2 entries decrypts with it. ` +
        "Use the key file the store was written with; a store whose key is lost cannot be read (move it away to start an empty one).",
    );
  });

  it("refuses a tampered ciphertext, naming the entry", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "A", "one", binding);
    await store.put("acme", "B", "two", binding);
    const doc = await stored();
    const ct = Buffer.from(doc.secrets[1]!.ciphertext as string, "base64");
    ct[0] = (ct[0] ?? 0) ^ 1;
    doc.secrets[1]!.ciphertext = ct.toString("base64");
    await writeFile(config.storeFile, JSON.stringify(doc));
    const err = await SecretStore.open(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretKeyError);
    expect((err as Error).message).toContain("but not 1 of its entries (acme/B v1)");
  });

  it("refuses an entry moved to another tenant, another name or another version (the AAD binds them)", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "TOKEN", "acme-value", binding);
    await store.put("beta", "OTHER", "beta-value", binding);
    const original = await readFile(config.storeFile, "utf8");
    for (const [field, swapped] of [
      ["tenant", "beta"],
      ["name", "STOLEN"],
      ["version", 2],
    ] as const) {
      const doc = JSON.parse(original) as { secrets: Record<string, unknown>[] };
      doc.secrets[0]![field] = swapped;
      await writeFile(config.storeFile, JSON.stringify(doc));
      const err = await SecretStore.open(config).catch((e: unknown) => e);
      expect(err, field).toBeInstanceOf(SecretKeyError);
      expect((err as Error).message, field).toContain("but not 1 of its entries");
    }
  });

  it("cipher: the AAD of one tenant does not open another's ciphertext", () => {
    const key = randomBytes(32);
    const sealed = sealSecret(key, { tenant: "acme", name: "T", version: 1 }, VALUE);
    expect(openSecret(key, { tenant: "acme", name: "T", version: 1 }, sealed)).toBe(VALUE);
    expect(openSecret(key, { tenant: "beta", name: "T", version: 1 }, sealed)).toBeUndefined();
    expect(openSecret(randomBytes(32), { tenant: "acme", name: "T", version: 1 }, sealed)).toBeUndefined();
    // A fresh IV each time: the same value seals differently.
    expect(sealSecret(key, { tenant: "acme", name: "T", version: 1 }, VALUE).ciphertext).not.toBe(
      sealed.ciphertext,
    );
  });

  it("refuses a store file that is not one, naming it", async () => {
    await mkdir(join(dir, "state"), { recursive: true });
    await writeFile(config.storeFile, "{not json");
    const err = await SecretStore.open(config).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretStoreFileError);
    expect((err as Error).message).toBe(
      `secrets.storeFile '${config.storeFile}' is not a warden secret store: it is not JSON. ` +
        "Restore it from a backup, or point secrets.storeFile at a new path to start with an empty store.",
    );
  });

  it("writes atomically: a 0600 file, no temp file left, a crash's temp file removed at open", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "A", "one", binding);
    expect((await stat(config.storeFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(dir, "state"))).toEqual(["secrets.json"]);
    // A crash between the temp file's write and the rename leaves a partial temp file: the store
    // reads the whole old file, and the temp file is gone.
    await writeFile(join(dir, "state", "secrets.json.tmp-abcdef"), '{"format":"warden-secrets","vers');
    const reopened = await SecretStore.open(config);
    expect(reopened.value("acme", "A")).toBe("one");
    expect(await readdir(join(dir, "state"))).toEqual(["secrets.json"]);
  });

  it("a write that fails changes nothing: no temp file, the old value stays, in memory and on disk", async () => {
    const store = await SecretStore.open(config);
    await store.put("acme", "A", "one", binding);
    // The rename over the store fails (a directory stands where the file was; works as root too).
    const aside = join(dir, "aside.json");
    await rename(config.storeFile, aside);
    await mkdir(join(config.storeFile, "blocker"), { recursive: true });
    const err = await store.put("acme", "A", "two", binding).catch((e: unknown) => e);
    expect(["EISDIR", "ENOTEMPTY", "EEXIST"]).toContain((err as NodeJS.ErrnoException).code);
    const gone = await store.delete("acme", "A").catch((e: NodeJS.ErrnoException) => e.code);
    expect(["EISDIR", "ENOTEMPTY", "EEXIST"]).toContain(gone);
    expect(store.value("acme", "A")).toBe("one");
    expect(store.info("acme", "A")?.version).toBe(1);
    expect((await readdir(join(dir, "state"))).sort()).toEqual(["secrets.json"]);
    await rm(config.storeFile, { recursive: true });
    await rename(aside, config.storeFile);
    expect((await SecretStore.open(config)).value("acme", "A")).toBe("one");
  });

  it("serialises concurrent changes: every one is in the file, versions in order", async () => {
    const store = await SecretStore.open({ ...config, maxPerTenant: 100 });
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => store.put("acme", `S${i}`, `v${i}`, binding)),
      ...Array.from({ length: 5 }, (_, i) => store.put("acme", "ROTATED", `r${i}`, binding)),
    ]);
    const reopened = await SecretStore.open({ ...config, maxPerTenant: 100 });
    expect(reopened.list("acme").map((s) => s.name)).toEqual([
      "ROTATED",
      ...Array.from({ length: 10 }, (_, i) => `S${i}`),
    ]);
    expect(reopened.info("acme", "ROTATED")?.version).toBe(5);
    expect(reopened.value("acme", "ROTATED")).toBe("r4");
  });

  it("gives an adopted session a secret deleted meanwhile, refused as revoked; a new session a 400", async () => {
    const store = await SecretStore.open(config);
    const [adopted] = sessionSecrets(store, "acme", [{ name: "GONE" }], { mustExist: false });
    expect(adopted?.name).toBe("GONE");
    expect(await adopted?.value()).toBeUndefined();
    expect(adopted?.bindings).toEqual([]);
    expect(() => sessionSecrets(store, "acme", [{ name: "GONE" }], { mustExist: true })).toThrow(
      "secrets[0].name GONE is not a secret of tenant 'acme'",
    );
    // Put back, the same adopted secret has it again at its next use.
    await store.put("acme", "GONE", VALUE, binding);
    expect(await adopted?.value()).toBe(VALUE);
  });

  it("bounds a tenant's secrets at maxPerTenant (429 RATE_LIMITED); a rotation still works", async () => {
    const store = await SecretStore.open(config);
    for (const name of ["A", "B", "C"]) await store.put("acme", name, "v", binding);
    const err = await store.put("acme", "D", "v", binding).catch((e: unknown) => e);
    expect((err as { code: string }).code).toBe("RATE_LIMITED");
    expect((err as Error).message).toBe(
      "Tenant 'acme' has 3 secrets (secrets.maxPerTenant); delete one first.",
    );
    expect((await store.put("acme", "A", "w", binding)).secret.version).toBe(2);
    expect((await store.put("beta", "D", "v", binding)).created).toBe(true);
  });
});
