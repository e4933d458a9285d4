/**
 * The secret store's key: 32 bytes (AES-256) read from the file `secrets.keyFile` names, written
 * as 64 hex digits or as base64 (standard or URL-safe alphabet, padding optional), with surrounding
 * whitespace (a trailing newline) ignored. Errors never quote the file's content.
 */
import { open } from "node:fs/promises";
import { SecretKeyError } from "./errors.js";

/** Bytes of an AES-256 key. */
const SECRET_KEY_BYTES = 32;

/** A key file is read only up to this size: anything longer is not a key. */
const KEY_FILE_MAX_BYTES = 1024;

const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]{43}=?$/;

const HOW =
  "32 random bytes written as 64 hex digits or 44 base64 characters ('openssl rand -base64 32 > FILE')";

/**
 * Reads the key in `path`. Throws SecretKeyError naming `secrets.keyFile` and the path when the
 * file cannot be read or does not hold exactly 32 bytes in hex or base64.
 */
export async function loadSecretKey(path: string): Promise<Buffer> {
  let text: string;
  try {
    const fh = await open(path, "r");
    try {
      const buf = Buffer.alloc(KEY_FILE_MAX_BYTES + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      if (bytesRead > KEY_FILE_MAX_BYTES)
        throw new SecretKeyError(
          path,
          `secrets.keyFile '${path}' is over ${KEY_FILE_MAX_BYTES} bytes, so it is not a key: it must hold ${HOW}.`,
        );
      text = buf.subarray(0, bytesRead).toString("latin1").trim();
    } finally {
      await fh.close();
    }
  } catch (err) {
    if (err instanceof SecretKeyError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new SecretKeyError(
      path,
      `secrets.keyFile '${path}' cannot be read (${code}); make it readable by warden serve, holding ${HOW}.`,
    );
  }
  const key = HEX.test(text)
    ? Buffer.from(text, "hex")
    : BASE64.test(text)
      ? Buffer.from(text, "base64") // Node's base64 decoder reads the URL-safe alphabet too
      : undefined;
  if (key?.length !== SECRET_KEY_BYTES)
    throw new SecretKeyError(
      path,
      `secrets.keyFile '${path}' does not hold a key (${text.length} characters after trimming whitespace): it must hold ${HOW}.`,
    );
  return key;
}
