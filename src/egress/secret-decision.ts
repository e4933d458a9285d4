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
  type SecretBinding,
  type SecretDecision,
  type SecretRequest,
  type SessionSecret,
} from "./secrets.js";

/** Ports a binding covers when it names none. */
export const DEFAULT_SECRET_PORTS: readonly number[] = [443];
/** Headers a binding fills when it names none. */
export const DEFAULT_SECRET_HEADERS: readonly string[] = ["authorization"];
/** Headers a secret may never be put in: they frame or route the request. */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
]);
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
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
    if (!HEADER_NAME.test(h))
      throw new InvalidArgumentError(`${what}: header ${JSON.stringify(h)} is not a header name.`);
    if (FORBIDDEN_HEADERS.has(h))
      throw new InvalidArgumentError(
        `${what}: header ${JSON.stringify(h)} frames or routes the request; a secret cannot go there.`,
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

function covers(b: SecretBinding, req: SecretRequest, header: string): boolean {
  const path = req.path.split("?")[0] ?? "";
  return (
    b.hosts.some((h) => hostMatches(h, req.host)) &&
    (b.ports ?? DEFAULT_SECRET_PORTS).includes(req.port) &&
    (!b.methods || b.methods.includes(req.method.toUpperCase())) &&
    (!b.pathPrefixes || b.pathPrefixes.some((p) => path.startsWith(p))) &&
    (b.headers ?? DEFAULT_SECRET_HEADERS).includes(header)
  );
}

/**
 * Decides one request: every placeholder in it must be in a header a binding of its secret names,
 * for this host, port, method and path, and that secret must have a value now; then each such
 * header's placeholders are replaced by the values. Otherwise the request is refused, naming the
 * first secret at fault: `unknown`, `not-in-bound-header` (URL or an unbound header), `unbound`
 * (host, port, method or path), `revoked` (no value), `bad-value`. A request without a placeholder
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
