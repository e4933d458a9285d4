/**
 * What the secret store accepts: a name of SECRET_NAME, a value the gateway can put in an HTTP
 * header, and bindings written as network rules write hosts. Every error is an InvalidArgumentError
 * (HTTP 400) naming the field; an error about the value never quotes it.
 */
import { parseHostEntry } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { SECRET_NAME, type SecretBinding } from "../../secrets/index.js";

/** Longest value, bytes (= characters: only ASCII is accepted). */
export const SECRET_VALUE_MAX_BYTES = 8192;

/** The most bindings of one secret, and of each list in one binding. */
export const BINDING_BOUNDS = {
  bindings: 16,
  hosts: 32,
  ports: 16,
  methods: 16,
  pathPrefixes: 32,
  headers: 16,
} as const;

/** Longest path prefix, characters. */
const PATH_PREFIX_MAX_CHARS = 1024;

/**
 * Headers a binding may not name: `host` (the gateway checks it against the TLS name), the
 * body's framing (`content-length`, `transfer-encoding`) and the hop-by-hop headers a proxy
 * consumes (RFC 9110 7.6.1: `connection`, `keep-alive`, `proxy-connection`, `te`, `trailer`, `upgrade`).
 */
const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
]);

/** An HTTP token (RFC 9110 5.6.2), lower-case letters only. */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** An HTTP token, upper-case letters only. */
const METHOD = /^[A-Z0-9!#$%&'*+.^_`|~-]{1,32}$/;

/** Throws InvalidArgumentError when `name` is not a secret name (SECRET_NAME). */
export function checkSecretName(name: string, field = "name"): void {
  if (!SECRET_NAME.test(name))
    throw new InvalidArgumentError({
      field,
      problem: `${JSON.stringify(name.slice(0, 80))} is not a secret name: upper-case letters, digits and _, starting with a letter, at most 64 characters (GITHUB_TOKEN).`,
    });
}

/**
 * Throws InvalidArgumentError (field `value`) unless `value` is 1 to 8192 characters of visible
 * ASCII (0x21-0x7e) or space, without `"` or `\`: the gateway sends it in an HTTP header, and its
 * helper protocol quotes values. The message says which kind of character is wrong, never the
 * value or where in it.
 */
export function checkSecretValue(value: string): void {
  const refuse = (what: string) =>
    new InvalidArgumentError({
      field: "value",
      problem:
        `${what}: a secret's value must be 1 to ${SECRET_VALUE_MAX_BYTES} characters of visible ASCII (0x21-0x7e) or space, ` +
        'without " or \\, because the gateway sends it in an HTTP header. The value is not repeated here.',
    });
  if (value.length === 0) throw refuse("is empty");
  if (value.length > SECRET_VALUE_MAX_BYTES) throw refuse(`is over ${SECRET_VALUE_MAX_BYTES} characters`);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) throw refuse("holds a line break (a trailing newline from a file?)");
    if (c < 0x20 || c === 0x7f) throw refuse("holds a control character");
    if (c > 0x7e) throw refuse("holds a non-ASCII character");
    if (c === 0x22) throw refuse('holds a double quote (")');
    if (c === 0x5c) throw refuse("holds a backslash (\\)");
  }
}

/** The fields a client sends for one binding (SecretBinding, before normalisation). */
export interface BindingInput {
  hosts: string[];
  ports?: number[];
  methods?: string[];
  pathPrefixes?: string[];
  headers?: string[];
}

/**
 * Checks and normalises `bindings` (1 to 16): hosts as network rules write them (a DNS name or
 * `*.` plus one, lower-cased, no port, no public suffix: src/egress parseHostEntry), ports
 * 1..65535, upper-case method tokens, path prefixes starting with `/`, lower-case header tokens
 * other than FORBIDDEN_HEADERS; duplicates removed, omitted fields left out (their defaults are
 * SecretBinding's). Throws InvalidArgumentError naming `bindings[i].field[j]`.
 */
export function normalizeBindings(bindings: readonly BindingInput[]): SecretBinding[] {
  if (bindings.length === 0 || bindings.length > BINDING_BOUNDS.bindings)
    throw new InvalidArgumentError({
      field: "bindings",
      problem: `must list 1 to ${BINDING_BOUNDS.bindings} bindings (each with hosts), got ${bindings.length}.`,
    });
  return bindings.map((b, i) => normalizeBinding(b, `bindings[${i}]`));
}

function normalizeBinding(b: BindingInput, at: string): SecretBinding {
  const hosts = list(b.hosts, `${at}.hosts`, BINDING_BOUNDS.hosts, true).map((h, j) =>
    bindingHost(h, `${at}.hosts[${j}]`),
  );
  const out: SecretBinding = { hosts: [...new Set(hosts)] };
  if (b.ports !== undefined) {
    const ports = list(b.ports, `${at}.ports`, BINDING_BOUNDS.ports);
    ports.forEach((p, j) => {
      if (!Number.isInteger(p) || p < 1 || p > 65535)
        throw new InvalidArgumentError({
          field: `${at}.ports[${j}]`,
          problem: `must be a port from 1 to 65535, got ${p}.`,
        });
    });
    out.ports = [...new Set(ports)].sort((x, y) => x - y);
  }
  if (b.methods !== undefined) {
    const methods = list(b.methods, `${at}.methods`, BINDING_BOUNDS.methods);
    methods.forEach((m, j) => {
      if (!METHOD.test(m))
        throw new InvalidArgumentError({
          field: `${at}.methods[${j}]`,
          problem: `${JSON.stringify(m.slice(0, 40))} is not an upper-case HTTP method (GET, POST).`,
        });
    });
    out.methods = [...new Set(methods)];
  }
  if (b.pathPrefixes !== undefined) {
    const prefixes = list(b.pathPrefixes, `${at}.pathPrefixes`, BINDING_BOUNDS.pathPrefixes);
    for (const [j, p] of prefixes.entries()) checkPathPrefix(p, `${at}.pathPrefixes[${j}]`);
    out.pathPrefixes = [...new Set(prefixes)];
  }
  if (b.headers !== undefined) {
    const headers = list(b.headers, `${at}.headers`, BINDING_BOUNDS.headers);
    for (const [j, h] of headers.entries()) checkHeaderName(h, `${at}.headers[${j}]`);
    out.headers = [...new Set(headers)];
  }
  return out;
}

/** `items` when it has 1 to `max` entries; else InvalidArgumentError (an empty optional list: leave it out). */
function list<T>(items: readonly T[], field: string, max: number, required = false): T[] {
  if (items.length > max || (required && items.length === 0))
    throw new InvalidArgumentError({
      field,
      problem: `must list ${required ? `1 to ${max}` : `at most ${max}`} entries, got ${items.length}.`,
    });
  if (items.length === 0)
    throw new InvalidArgumentError({ field, problem: "is empty: leave it out for its default." });
  return [...items];
}

/** A binding host: a host pattern without a port, as parseHostEntry reads it. */
function bindingHost(entry: string, field: string): string {
  if (entry.includes(":"))
    throw new InvalidArgumentError({
      field,
      problem: `${JSON.stringify(entry.slice(0, 260))} has a port: a binding's hosts are names only (api.github.com, *.example.org); its ports go in ports.`,
    });
  return parseHostEntry(entry, "allow", field).host;
}

function checkPathPrefix(prefix: string, field: string): void {
  const bad = (problem: string) => new InvalidArgumentError({ field, problem });
  if (!prefix.startsWith("/")) throw bad(`must start with /, got ${JSON.stringify(prefix.slice(0, 80))}.`);
  if (prefix.length > PATH_PREFIX_MAX_CHARS) throw bad(`is over ${PATH_PREFIX_MAX_CHARS} characters.`);
  if (!/^[\x21-\x7e]+$/.test(prefix) || /[?#]/.test(prefix))
    throw bad("must be visible ASCII without spaces, ? or # (a path, not a query).");
  if (prefix.split("/").some((s) => s === "." || s === ".."))
    throw bad("must not hold . or .. segments (the request's path is compared as sent).");
}

function checkHeaderName(name: string, field: string): void {
  if (!HEADER_NAME.test(name))
    throw new InvalidArgumentError({
      field,
      problem: `${JSON.stringify(name.slice(0, 64))} is not a lower-case header name (authorization, x-api-key).`,
    });
  if (FORBIDDEN_HEADERS.has(name))
    throw new InvalidArgumentError({
      field,
      problem: `${name} cannot carry a secret: the gateway or the connection uses it (host, content-length, transfer-encoding and the hop-by-hop headers are refused).`,
    });
}
