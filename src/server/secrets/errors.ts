/**
 * The errors of the secret store. None of them ever holds a secret's value or the key: they name
 * the config field, the file, the tenant and the secret's name.
 */
import { WardenError } from "../../errors.js";

/**
 * A secrets route or a session's `secrets` on a server whose config has no `secrets` section
 * (HTTP 400 INVALID_ARGUMENT): the message names `secrets.keyFile`.
 */
export class SecretsNotConfiguredError extends WardenError {
  constructor() {
    super(
      "INVALID_ARGUMENT",
      "This warden serve has no secret store: its config has no 'secrets.keyFile'. " +
        "The operator sets secrets.keyFile to a file of 32 random bytes (64 hex digits or base64: " +
        "'openssl rand -base64 32 > key' and chmod 600) and restarts the server.",
    );
  }
}

/**
 * The key file cannot be read, does not hold a 32-byte key, or does not open the store (a wrong key,
 * or entries altered). Code INVALID_ARGUMENT: `warden serve` refuses to start with it, naming
 * `keyFile` (and the store file when the key does not open it), never its content.
 */
export class SecretKeyError extends WardenError {
  constructor(
    readonly keyFile: string,
    message: string,
  ) {
    super("INVALID_ARGUMENT", message);
  }
}

/**
 * The store file exists but is not a warden secret store this version reads (not JSON, a wrong
 * shape, two entries for one name). Code INVALID_ARGUMENT: `warden serve` refuses to start with it,
 * naming the file and what is wrong.
 */
export class SecretStoreFileError extends WardenError {
  constructor(
    readonly storeFile: string,
    problem: string,
  ) {
    super(
      "INVALID_ARGUMENT",
      `secrets.storeFile '${storeFile}' is not a warden secret store: ${problem}. ` +
        "Restore it from a backup, or point secrets.storeFile at a new path to start with an empty store.",
    );
  }
}
