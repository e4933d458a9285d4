/**
 * Encryption of one secret's value at rest: AES-256-GCM (node:crypto) with a random 96-bit IV per
 * write and a 128-bit tag; the additional authenticated data binds the ciphertext to its tenant,
 * name and version (`warden-secret v1\n<tenant>\n<name>\n<version>`), so an entry moved to another
 * tenant or name, or given another version, does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a ciphertext is bound to: its additional authenticated data. */
export interface SecretLabel {
  tenant: string;
  name: string;
  /** 1 for a new secret, +1 at each rotation. */
  version: number;
}

/** The encrypted value, each field base64. */
export interface SealedValue {
  iv: string;
  tag: string;
  ciphertext: string;
}

/** The AAD of `label`: `warden-secret v1\n<tenant>\n<name>\n<version>` in UTF-8. */
function secretAad({ tenant, name, version }: SecretLabel): Buffer {
  return Buffer.from(`warden-secret v1\n${tenant}\n${name}\n${version}`, "utf8");
}

/** Encrypts `value` (UTF-8) under `key` (32 bytes) for `label`, with a fresh random IV. */
export function sealSecret(key: Buffer, label: SecretLabel, value: string): SealedValue {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(secretAad(label));
  const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return {
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ciphertext: ciphertext.toString("base64"),
  };
}

/**
 * The value sealed in `sealed` for `label`, or undefined when it does not authenticate: another
 * key, another label (tenant, name or version), or any byte of IV, tag or ciphertext changed.
 */
export function openSecret(key: Buffer, label: SecretLabel, sealed: SealedValue): string | undefined {
  const iv = Buffer.from(sealed.iv, "base64");
  const tag = Buffer.from(sealed.tag, "base64");
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(secretAad(label));
    decipher.setAuthTag(tag);
    const plain = Buffer.concat([
      decipher.update(Buffer.from(sealed.ciphertext, "base64")),
      decipher.final(),
    ]);
    return plain.toString("utf8");
  } catch {
    return undefined;
  }
}
