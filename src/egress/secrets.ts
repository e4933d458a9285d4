/**
 * Secrets that never enter the sandbox (docs/secrets.md). A session is given named secrets; inside
 * the sandbox each is only its placeholder, `{{NAME}}` (in an environment variable or a file the
 * operator chooses). The session's egress gateway asks the controller about every request that
 * carries a placeholder; the controller replaces it with the value in the headers a binding names,
 * only when the request's host (and port, method, path) is bound to that secret, and refuses the
 * request otherwise (an attempted leak). The value lives in the controller and, for one request,
 * in the gateway; never in the sandbox.
 */

/** Where a secret may be sent: a request matching every field given here. */
export interface SecretBinding {
  /** Host patterns as network rules write them: `api.github.com`, `*.example.org` (subdomains only). */
  hosts: string[];
  /** TCP ports; default [443]. */
  ports?: number[];
  /** Upper-case HTTP methods; default any. */
  methods?: string[];
  /** Path prefixes (`/repos/acme/`); default any. A prefix matches whole segments' starts as written. */
  pathPrefixes?: string[];
  /** Lower-case header names whose placeholder is replaced; default ["authorization"]. */
  headers?: string[];
}

/** A secret's current value, asked at each use (so rotation and revocation apply to the next request). */
export type SecretValueSource = () => Promise<string | undefined> | string | undefined;

/**
 * One secret a session may use. `name` is `[A-Z][A-Z0-9_]{0,63}`; its placeholder is `{{NAME}}`.
 * `env` names the sandbox environment variable that holds the placeholder (default: `name`;
 * `false`: none); `file` is an absolute path in the sandbox where a file holding the placeholder is
 * written. `value` gives the value at each use (undefined: revoked, the request is refused).
 */
export interface SessionSecret {
  name: string;
  bindings: SecretBinding[];
  env?: string | false;
  file?: string;
  value: SecretValueSource;
}

/** A request the gateway holds because it carries a placeholder (in a header or its URL). */
export interface SecretRequest {
  host: string;
  port: number;
  method: string;
  /** The request's path and query as sent (percent-encoding kept). */
  path: string;
  /** Every request header, names lower-cased, in order. */
  headers: Array<[string, string]>;
}

/**
 * The controller's answer: `replace` the named headers' values (lower-case name → new value) and
 * let the request through, or `refuse` it. `used` / `secret` name the secrets involved, never a value.
 */
export type SecretDecision =
  | { verdict: "replace"; headers: Record<string, string>; used: string[] }
  | { verdict: "refuse"; reason: SecretRefusal; secret: string };

/**
 * Why a request with a placeholder was refused: `unbound` (its host, port, method or path is not
 * bound to the secret: an attempted leak), `not-in-bound-header` (the placeholder is in the URL or a
 * header its binding does not name: an attempted leak), `unknown` (no secret of that name in the
 * session), `revoked` (the secret has no value now), `bad-value` (the value cannot be sent in a header),
 * `bad-header` (the header around the placeholder holds a line break, `"`, `\` or a byte outside
 * visible ASCII).
 */
export type SecretRefusal =
  | "unbound"
  | "not-in-bound-header"
  | "unknown"
  | "revoked"
  | "bad-value"
  | "bad-header";

/** Placeholder of a secret name, as the sandbox sees it. */
export function placeholderOf(name: string): string {
  return `{{${name}}}`;
}

/** A secret's name: upper-case letters, digits and `_`, starting with a letter, at most 64 characters. */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
