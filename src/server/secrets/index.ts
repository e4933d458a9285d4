/**
 * The per-tenant secret store of `warden serve` (docs/server-api.md, Secrets): values encrypted at
 * rest with the operator's key, shown by no route; and a session's secrets read from it at each use.
 */
export { SecretKeyError, SecretStoreFileError, SecretsNotConfiguredError } from "./errors.js";
export { type SessionSecretRequest, sessionSecrets } from "./session-secrets.js";
export { SecretStore } from "./store.js";
