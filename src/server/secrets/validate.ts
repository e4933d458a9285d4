/**
 * What the secret store accepts: a name of SECRET_NAME, a value the gateway can put in an HTTP
 * header (src/egress secretValueProblem), and bindings the gateway takes (src/egress
 * parseSecretBinding, which fills the defaults: ports [443], headers [authorization]), written as
 * network rules write hosts (parseHostEntry: no port, no public suffix), with bounded lists. Every
 * error is an InvalidArgumentError (HTTP 400) naming the field; an error about the value never
 * quotes it.
 */
import {
  hasDotSegment,
  MAX_SECRET_BYTES,
  parseHostEntry,
  parseSecretBinding,
  SECRET_NAME,
  type SecretBinding,
  secretValueProblem,
} from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";

/** The most bindings of one secret, and of each list in one binding. */
const BINDING_BOUNDS = {
  bindings: 16,
  hosts: 32,
  ports: 16,
  methods: 16,
  pathPrefixes: 32,
  headers: 16,
} as const;

/** Longest path prefix, characters. */
const PATH_PREFIX_MAX_CHARS = 1024;

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
 * ASCII (0x21-0x7e) or space, without `"` or `\`: the gateway sends it in an HTTP header. The
 * message says what is wrong, never the value or where in it.
 */
export function checkSecretValue(value: string): void {
  const problem = secretValueProblem(value);
  if (problem === null) return;
  const newline = /[\r\n]/.test(value) ? " (a line break: a trailing newline from a file?)" : "";
  throw new InvalidArgumentError({
    field: "value",
    problem:
      `is refused: ${problem}${newline}. A secret's value is 1 to ${MAX_SECRET_BYTES} characters of visible ASCII (0x21-0x7e) or space, ` +
      'without " or \\, because the gateway sends it in an HTTP header. The value is not repeated here.',
  });
}

/** The fields a client sends for one binding (SecretBinding, before its defaults are filled). */
export interface BindingInput {
  hosts: string[];
  ports?: number[];
  methods?: string[];
  pathPrefixes?: string[];
  headers?: string[];
}

/**
 * Checks and normalises `bindings` (1 to 16): hosts lower-cased, without a port or a public suffix
 * alone (`*.com`), lists of at most BINDING_BOUNDS entries without duplicates, path prefixes
 * without `?`, `#`, `.` or `..` segments, no hop-by-hop header; then the gateway's own check and
 * defaults (parseSecretBinding). Throws InvalidArgumentError naming `bindings[i]…`.
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
  const hosts = list(b.hosts, `${at}.hosts`, BINDING_BOUNDS.hosts, true);
  const out: SecretBinding = { hosts: unique(hosts.map((h, j) => bindingHost(h, `${at}.hosts[${j}]`))) };
  if (b.ports !== undefined)
    out.ports = unique(list(b.ports, `${at}.ports`, BINDING_BOUNDS.ports)).sort((x, y) => x - y);
  if (b.methods !== undefined) out.methods = unique(list(b.methods, `${at}.methods`, BINDING_BOUNDS.methods));
  if (b.pathPrefixes !== undefined) {
    const prefixes = list(b.pathPrefixes, `${at}.pathPrefixes`, BINDING_BOUNDS.pathPrefixes);
    for (const [j, p] of prefixes.entries()) checkPathPrefix(p, `${at}.pathPrefixes[${j}]`);
    out.pathPrefixes = unique(prefixes);
  }
  if (b.headers !== undefined) {
    // parseSecretBinding below refuses the headers that frame, route or end at the proxy.
    out.headers = unique(list(b.headers, `${at}.headers`, BINDING_BOUNDS.headers));
  }
  return parseSecretBinding(out, at);
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
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
  if (hasDotSegment(prefix))
    throw bad("must not hold . or .. segments (the request's path is compared as sent).");
}
