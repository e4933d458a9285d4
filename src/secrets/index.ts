/** Secrets kept out of the sandbox (docs/secrets.md): placeholders, bindings, the decision on a request. */
export {
  placeholderOf,
  SECRET_NAME,
  type SecretBinding,
  type SecretDecision,
  type SecretRefusal,
  type SecretRequest,
  type SecretValueSource,
  type SessionSecret,
} from "./types.js";
