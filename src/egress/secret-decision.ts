/**
 * The controller's decision on a request the gateway holds because it carries a secret's
 * placeholder (pure but for asking each secret's value source). The value goes only into the
 * headers a binding names, only on requests whose host, port, method and path the binding covers;
 * anything else that carries a placeholder is refused (docs/secrets.md).
 */
import { InvalidArgumentError } from "../errors.js";
import { hostMatches, hostProblem } from "./host-pattern.js";
import {
  placeholderOf,
  SECRET_NAME,
  type SecretBinding,
  type SecretDecision,
  type SecretRequest,
  type SessionSecret,
} from "./secrets.js";

/** Ports a binding covers when it names none. */
export const DEFAULT_SECRET_PORTS: readonly number[] = [443];
/** Headers a binding fills when it names none. */
export const DEFAULT_SECRET_HEADERS: readonly string[] = ["authorization"];
/**
 * Headers a secret may never be put in: they frame or route the request, or a proxy consumes them
 * (hop-by-hop, RFC 9110 7.6.1), so a value there would not reach the origin as sent.
 */
export const FORBIDDEN_SECRET_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "keep-alive",
  "proxy-connection",
  "trailer",
]);
/** A lower-case header name (RFC 9110's token), at most 64 characters, as the gateway takes them. */
export const SECRET_HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const METHOD = /^[A-Z]{1,16}$/;
/** Longest value a secret may have (bytes). */
export const MAX_SECRET_BYTES = 8192;

/** A placeholder as the sandbox writes it, or percent-encoded in a URL (`%7B%7BNAME%7D%7D`). */
const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]{0,63})\}\}/g;

/**
 * Checks one binding and fills its defaults (ports [443], headers ["authorization"]).
 * InvalidArgumentError naming `what` (e.g. `secret GITHUB_TOKEN`) and the entry at fault.
 */
export function parseSecretBinding(
  binding: SecretBinding,
  what: string,
): Required<Omit<SecretBinding, "methods" | "pathPrefixes">> &
  Pick<SecretBinding, "methods" | "pathPrefixes"> {
  if (!Array.isArray(binding.hosts) || binding.hosts.length === 0)
    throw new InvalidArgumentError(`${what}: a binding needs at least one host (hosts: [api.example.org]).`);
  const hosts = binding.hosts.map((h) => {
    const host = String(h).trim().toLowerCase();
    const problem = hostProblem(host);
    if (problem) throw new InvalidArgumentError(`${what}: host ${JSON.stringify(h)} must be ${problem}.`);
    return host;
  });
  const ports = binding.ports ?? [...DEFAULT_SECRET_PORTS];
  for (const p of ports)
    if (!Number.isInteger(p) || p < 1 || p > 65535)
      throw new InvalidArgumentError(
        `${what}: port ${JSON.stringify(p)} must be a whole number from 1 to 65535.`,
      );
  for (const m of binding.methods ?? [])
    if (!METHOD.test(m))
      throw new InvalidArgumentError(
        `${what}: method ${JSON.stringify(m)} must be an upper-case HTTP method (GET, POST, …).`,
      );
  for (const p of binding.pathPrefixes ?? [])
    if (typeof p !== "string" || !p.startsWith("/") || /\s/.test(p))
      throw new InvalidArgumentError(
        `${what}: path prefix ${JSON.stringify(p)} must start with / and hold no space.`,
      );
  const headers = (binding.headers ?? [...DEFAULT_SECRET_HEADERS]).map((h) => String(h).toLowerCase());
  for (const h of headers) {
    if (!SECRET_HEADER_NAME.test(h))
      throw new InvalidArgumentError(`${what}: header ${JSON.stringify(h)} is not a header name.`);
    if (FORBIDDEN_SECRET_HEADERS.has(h))
      throw new InvalidArgumentError(
        `${what}: header ${JSON.stringify(h)} frames or routes the request, or a proxy consumes it; a secret cannot go there.`,
      );
  }
  return {
    hosts,
    ports,
    headers,
    ...(binding.methods ? { methods: binding.methods } : {}),
    ...(binding.pathPrefixes ? { pathPrefixes: binding.pathPrefixes } : {}),
  };
}

/**
 * Why `value` cannot be a secret's value, or null: 1 to MAX_SECRET_BYTES characters of visible
 * ASCII or space, without `"` or `\` (the gateway carries it as a quoted header value). Never
 * includes the value itself.
 */
export function secretValueProblem(value: string): string | null {
  if (value.length === 0) return "it is empty";
  if (value.length > MAX_SECRET_BYTES) return `it is longer than ${MAX_SECRET_BYTES} bytes`;
  if (!/^[\x20-\x7e]+$/.test(value))
    return "it holds a character outside visible ASCII and space (a header cannot carry it)";
  if (/["\\]/.test(value)) return 'it holds " or \\, which the gateway cannot pass on in a header';
  return null;
}

/** Variables a placeholder may not take: the sandbox's own, the gateway's proxy and CA variables, the loader's. */
const RESERVED_ENV =
  /^(PATH|HOME|USER|LOGNAME|SHELL|PWD|TERM|TMPDIR|LANG|LC_[A-Z]+|LD_[A-Z_]+|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_FILE|PIP_CERT|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|GIT_SSL_CAINFO|NODE_EXTRA_CA_CERTS|NODE_OPTIONS|PYTHONPATH)$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * Checks a session's secrets as the library takes them (NetworkOptions.secrets) and returns them
 * with their bindings' defaults filled in: unique names matching SECRET_NAME, bindings
 * (parseSecretBinding), a placeholder variable that is a variable name and not one the sandbox or
 * the gateway needs (PATH, HOME, the proxy and CA variables, LD_*, …) and not shared, an absolute
 * placeholder file, a `value` function. Returns the same objects (their `bindings` and `value` are
 * read at each use). InvalidArgumentError naming the secret and the fix.
 */
export function checkSessionSecrets(secrets: readonly SessionSecret[]): SessionSecret[] {
  const names = new Set<string>();
  const vars = new Set<string>();
  return secrets.map((secret, i) => {
    const what = `network.secrets[${i}]`;
    if (!SECRET_NAME.test(String(secret?.name)))
      throw new InvalidArgumentError(
        `${what}: name ${JSON.stringify(secret?.name)} must be upper-case letters, digits and _, starting with a letter (GITHUB_TOKEN).`,
      );
    if (names.has(secret.name))
      throw new InvalidArgumentError(`${what}: secret ${secret.name} is given twice.`);
    names.add(secret.name);
    if (typeof secret.value !== "function")
      throw new InvalidArgumentError(`${what}: secret ${secret.name} needs value: () => string | undefined.`);
    if (!Array.isArray(secret.bindings) || secret.bindings.length === 0)
      throw new InvalidArgumentError(
        `${what}: secret ${secret.name} needs at least one binding ({ hosts: [...] }).`,
      );
    const env = secret.env ?? secret.name;
    if (env !== false) {
      if (!ENV_NAME.test(env) || RESERVED_ENV.test(env))
        throw new InvalidArgumentError(
          `${what}: secret ${secret.name} cannot hold its placeholder in ${JSON.stringify(env)} (${ENV_NAME.test(env) ? "the sandbox or its gateway needs that variable" : "not a variable name"}); choose another env.`,
        );
      if (vars.has(env))
        throw new InvalidArgumentError(
          `${what}: secret ${secret.name} shares the variable ${env} with another secret.`,
        );
      vars.add(env);
    }
    if (secret.file !== undefined && !secret.file.startsWith("/"))
      throw new InvalidArgumentError(
        `${what}: secret ${secret.name}'s file ${JSON.stringify(secret.file)} must be an absolute path in the sandbox.`,
      );
    for (const b of secret.bindings) parseSecretBinding(b, `${what} (${secret.name})`);
    // The caller's object itself: its value and bindings may change (a store's rotation or
    // rebinding applies to the next request), so nothing of it is copied here.
    return secret;
  });
}

/** The sandbox environment variables that hold placeholders: `{ NAME: "{{NAME}}" }` per secret (its `env`). */
export function placeholderEnv(secrets: readonly SessionSecret[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of secrets) if (s.env !== false) env[s.env ?? s.name] = placeholderOf(s.name);
  return env;
}

/** Every header name any binding of `secrets` fills, lower-case, sorted (the gateway checks these). */
export function secretHeaderNames(secrets: readonly SessionSecret[]): string[] {
  const names = new Set<string>();
  for (const s of secrets)
    for (const b of s.bindings)
      for (const h of b.headers ?? DEFAULT_SECRET_HEADERS) names.add(h.toLowerCase());
  return [...names].sort();
}

function namesIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%7b/gi, "{").replace(/%7d/gi, "}");
  }
}

/**
 * True when `path` means what it says to a prefix check: no `.` or `..` segment (raw,
 * percent-encoded or with `;params`) and no encoded `/` or `\`, which an origin may resolve to a
 * path outside the prefix (`/repos/acme/../../user`, `/repos/acme/..;/user`).
 */
function plainPath(path: string): boolean {
  // An encoded `?` or `#` ends the path for an origin that decodes before it splits.
  if (/%2f|%5c|%3f|%23|\\/i.test(path)) return false;
  // A segment's `;params` are dropped by some servers (Java's `..;/`): a dot segment either way.
  return !hasDotSegment(safeDecode(path).replace(/;[^/]*/g, ""));
}

/** True when a `/`-separated path has a `.` or `..` segment (one an origin resolves to another path). */
export function hasDotSegment(path: string): boolean {
  return path.split("/").some((segment) => segment === "." || segment === "..");
}

function covers(b: SecretBinding, req: SecretRequest, header: string): boolean {
  const path = req.path.split("?")[0] ?? "";
  return (
    b.hosts.some((h) => hostMatches(h, req.host)) &&
    (b.ports ?? DEFAULT_SECRET_PORTS).includes(req.port) &&
    (!b.methods || b.methods.includes(req.method.toUpperCase())) &&
    (!b.pathPrefixes || (plainPath(path) && b.pathPrefixes.some((p) => path.startsWith(p)))) &&
    (b.headers ?? DEFAULT_SECRET_HEADERS).includes(header)
  );
}

/**
 * Decides one request: every placeholder in it must be in a header a binding of its secret names,
 * for this host, port, method and path, and that secret must have a value now; then each such
 * header's placeholders are replaced by the values. Otherwise the request is refused, naming the
 * first secret at fault: `bad-header` (the header around the placeholder holds a line break,
 * `"`, `\` or a character outside visible ASCII), `unknown`, `not-in-bound-header` (URL or an
 * unbound header), `unbound` (host, port, method or path), `revoked` (no value), `bad-value`. A request without a placeholder
 * is passed on unchanged. A value source that throws counts as revoked.
 */
export async function decideSecretUse(
  request: SecretRequest,
  secrets: readonly SessionSecret[],
): Promise<SecretDecision> {
  const byName = new Map(secrets.map((s) => [s.name, s]));
  for (const name of namesIn(safeDecode(request.path)))
    return { verdict: "refuse", reason: byName.has(name) ? "not-in-bound-header" : "unknown", secret: name };
  const wanted: Array<{ header: string; value: string; names: string[] }> = [];
  for (const [header, value] of request.headers) {
    const names = namesIn(value);
    if (names.length === 0) continue;
    // The header as the sandbox wrote it goes back to the gateway with the value in it: it may
    // hold only what a secret's value may (no line break, `"` or `\`, which would let it add
    // lines or notes of its own to the gateway's answer).
    if (secretValueProblem(value) !== null)
      return { verdict: "refuse", reason: "bad-header", secret: names[0] as string };
    for (const name of names) {
      const secret = byName.get(name);
      if (!secret) return { verdict: "refuse", reason: "unknown", secret: name };
      const headerBound = secret.bindings.some((b) => (b.headers ?? DEFAULT_SECRET_HEADERS).includes(header));
      if (!headerBound) return { verdict: "refuse", reason: "not-in-bound-header", secret: name };
      if (!secret.bindings.some((b) => covers(b, request, header)))
        return { verdict: "refuse", reason: "unbound", secret: name };
    }
    wanted.push({ header, value, names });
  }
  const values = new Map<string, string>();
  for (const name of new Set(wanted.flatMap((w) => w.names))) {
    const value = await Promise.resolve()
      .then(() => (byName.get(name) as SessionSecret).value())
      .catch(() => undefined);
    if (value === undefined) return { verdict: "refuse", reason: "revoked", secret: name };
    if (secretValueProblem(value) !== null) return { verdict: "refuse", reason: "bad-value", secret: name };
    values.set(name, value);
  }
  const headers: Record<string, string> = {};
  for (const w of wanted)
    headers[w.header] = w.value.replace(PLACEHOLDER, (whole, name: string) => values.get(name) ?? whole);
  return { verdict: "replace", headers, used: [...values.keys()] };
}
