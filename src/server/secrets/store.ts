/**
 * The per-tenant secret store of `warden serve`: each tenant's named secrets (value and bindings),
 * encrypted at rest in one file (store-file.ts) with the operator's key (key.ts), AES-256-GCM bound
 * to tenant, name and version (cipher.ts). The store keeps the sealed entries in memory and opens
 * a value only when it is asked for it (`value`), so a session's secret reads the store at each
 * request: a rotation or a deletion applies to the next one. Changes are written one at a time, in
 * the order they came, and take effect in memory only once the file is written. One server owns
 * the file (the state dir's lock; a store file shared by two servers is not supported).
 */
import type { SecretBinding } from "../../egress/index.js";
import type { SecretsConfig } from "../config/index.js";
import { QuotaExceededError } from "../tenancy/index.js";
import { openSecret, sealSecret } from "./cipher.js";
import { SecretKeyError } from "./errors.js";
import { loadSecretKey } from "./key.js";
import { readStoreFile, type StoredSecret, writeStoreFile } from "./store-file.js";
import { type BindingInput, checkSecretName, checkSecretValue, normalizeBindings } from "./validate.js";

/** What the API shows of a secret: never its value. `updatedAt` is ISO-8601. */
export interface SecretInfo {
  name: string;
  /** 1 when created, +1 at each rotation (a new value or new bindings). */
  version: number;
  bindings: SecretBinding[];
  updatedAt: string;
}

/** How long a client waits before retrying a put over the tenant's bound: it only frees by a delete. */
const FULL_RETRY_AFTER_SECONDS = 60;

const keyOf = (tenant: string, name: string) => `${tenant}\n${name}`;

function infoOf(s: StoredSecret): SecretInfo {
  return { name: s.name, version: s.version, bindings: s.bindings, updatedAt: s.updatedAt };
}

/** The secret store; open one with SecretStore.open. */
export class SecretStore {
  private entries: Map<string, StoredSecret>;
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly key: Buffer,
    private readonly config: SecretsConfig,
    entries: readonly StoredSecret[],
    private readonly now: () => number,
  ) {
    this.entries = new Map(entries.map((s) => [keyOf(s.tenant, s.name), s]));
  }

  /**
   * Reads the key and the store (none yet: an empty store) and checks that the key opens every
   * entry. Throws SecretKeyError naming the key file (unreadable, not 32 bytes, or it opens no
   * entry: a wrong key; or some entries do not open: altered, or written with another key), or
   * SecretStoreFileError naming the store file; never an empty store in their place.
   */
  static async open(config: SecretsConfig, now: () => number = Date.now): Promise<SecretStore> {
    const key = await loadSecretKey(config.keyFile);
    const entries = await readStoreFile(config.storeFile);
    const failed = entries.filter((s) => openSecret(key, s, s) === undefined);
    if (failed.length > 0 && failed.length === entries.length)
      throw new SecretKeyError(
        config.keyFile,
        `secrets.keyFile '${config.keyFile}' does not open the secret store '${config.storeFile}': none of its ${entries.length} entries decrypts with it. ` +
          "Use the key file the store was written with; a store whose key is lost cannot be read (move it away to start an empty one).",
      );
    if (failed.length > 0) {
      const names = failed.slice(0, 5).map((s) => `${s.tenant}/${s.name} v${s.version}`);
      throw new SecretKeyError(
        config.keyFile,
        `secrets.keyFile '${config.keyFile}' opens the secret store '${config.storeFile}' but not ${failed.length} of its entries (${names.join(", ")}): ` +
          "they were altered, moved between tenants or names, or written with another key. Restore the store from a backup, or remove those entries.",
      );
    }
    return new SecretStore(key, config, entries, now);
  }

  /** The tenant's secrets, by name: never their values. */
  list(tenant: string): SecretInfo[] {
    return [...this.entries.values()]
      .filter((s) => s.tenant === tenant)
      .map(infoOf)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The tenant's secret `name` without its value, or undefined when it has none of that name. */
  info(tenant: string, name: string): SecretInfo | undefined {
    const s = this.entries.get(keyOf(tenant, name));
    return s && infoOf(s);
  }

  /**
   * The current value of the tenant's secret `name`, decrypted now; undefined when it has none
   * (deleted: a session using it sees it as revoked). The store was checked at open, so an entry
   * that does not decrypt is impossible short of memory corruption: it is undefined too (refused).
   */
  value(tenant: string, name: string): string | undefined {
    const s = this.entries.get(keyOf(tenant, name));
    return s && openSecret(this.key, s, s);
  }

  /**
   * Creates the tenant's secret `name` (version 1) or rotates it (version + 1) with `value` and
   * `bindings`, once the file holds it. Throws InvalidArgumentError naming the field (the name, the
   * value without quoting it, a binding), or QuotaExceededError when the tenant already has
   * `maxPerTenant` secrets and `name` is a new one.
   */
  put(
    tenant: string,
    name: string,
    value: string,
    bindings: readonly BindingInput[],
  ): Promise<{ secret: SecretInfo; created: boolean }> {
    checkSecretName(name);
    checkSecretValue(value);
    const normalized = normalizeBindings(bindings);
    return this.serially(async () => {
      const key = keyOf(tenant, name);
      const old = this.entries.get(key);
      if (!old && this.list(tenant).length >= this.config.maxPerTenant)
        throw new QuotaExceededError(
          `Tenant '${tenant}' has ${this.config.maxPerTenant} secrets (secrets.maxPerTenant); delete one first.`,
          FULL_RETRY_AFTER_SECONDS,
        );
      const label = { tenant, name, version: (old?.version ?? 0) + 1 };
      const entry: StoredSecret = {
        ...label,
        bindings: normalized,
        updatedAt: new Date(this.now()).toISOString(),
        ...sealSecret(this.key, label, value),
      };
      const next = new Map(this.entries);
      next.set(key, entry);
      await writeStoreFile(this.config.storeFile, [...next.values()]);
      this.entries = next;
      return { secret: infoOf(entry), created: !old };
    });
  }

  /** Deletes the tenant's secret `name` once the file no longer holds it; false when there was none. */
  delete(tenant: string, name: string): Promise<boolean> {
    return this.serially(async () => {
      const key = keyOf(tenant, name);
      if (!this.entries.has(key)) return false;
      const next = new Map(this.entries);
      next.delete(key);
      await writeStoreFile(this.config.storeFile, [...next.values()]);
      this.entries = next;
      return true;
    });
  }

  /** Runs `change` after every change queued before it (a failed one does not stop the queue). */
  private serially<T>(change: () => Promise<T>): Promise<T> {
    const run = this.tail.then(change);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
