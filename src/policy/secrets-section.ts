/**
 * A policy file's `secrets:` section: where each named secret may be sent (src/secrets, docs/secrets.md).
 * One binding per name:
 *
 *     secrets:
 *       GITHUB_TOKEN:
 *         hosts: [api.github.com]          # required: host patterns as network: entries write them, no port
 *         ports: [443]                     # default [443]
 *         methods: [GET, POST]             # default any
 *         pathPrefixes: [/repos/acme/]     # default any
 *         headers: [authorization]         # default [authorization]
 *
 * Layering, strictest wins, as for `network:`: a secret may be used only for a request that every
 * layer with a `secrets:` section binds it for. A layer whose section does not name a secret
 * withholds it (`secrets: {}` withholds all); a layer without the section abstains.
 * effectiveSecretBindings turns the layers into the bindings the gateway enforces.
 */
import { type Static, Type } from "typebox";
import {
  DEFAULT_SECRET_HEADERS,
  DEFAULT_SECRET_PORTS,
  FORBIDDEN_SECRET_HEADERS,
  hasDotSegment,
  hostMatches,
  parseHostEntry,
  SECRET_HEADER_NAME,
  SECRET_NAME,
  type SecretBinding,
} from "../egress/index.js";
import { InvalidArgumentError, WardenError } from "../errors.js";

const Strings = (description: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description }));

/** Schema of one secret's binding (the keys of SecretBinding). */
const SecretBindingSchema = Type.Object(
  {
    hosts: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: "host patterns (api.github.com, *.example.org), no port",
    }),
    ports: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), {
        minItems: 1,
        description: "TCP ports (default [443])",
      }),
    ),
    methods: Strings("HTTP methods (default any)"),
    pathPrefixes: Strings("URL path prefixes, e.g. /repos/acme/ (default any)"),
    headers: Strings("header names the placeholder is replaced in (default [authorization])"),
  },
  { additionalProperties: false },
);

/** Schema of the `secrets:` key (hooked into PolicyFileSchema): secret name → binding. */
export const SecretsSectionSchema = Type.Record(Type.String(), SecretBindingSchema);
export type SecretsSection = Static<typeof SecretsSectionSchema>;

/** One layer's bindings, by secret name (a name the section does not list is withheld by it). */
type SecretBindings = Readonly<Record<string, SecretBinding>>;

/** Letters only, upper-cased when loaded (the gateway's decision compares upper-case methods). */
const METHOD = /^[A-Za-z]{1,16}$/;

type LoadError = { path: (string | number)[]; key?: string; text: string };

/** Why `prefix` is not a path prefix, or null. */
function pathPrefixProblem(prefix: string): string | null {
  if (!prefix.startsWith("/")) return "a path prefix starts with / (e.g. /repos/acme/)";
  if (/[\s?#\x00-\x1f\x7f]/.test(prefix))
    return "a path prefix has no query (?), fragment (#), space or control character";
  if (hasDotSegment(prefix))
    return "a path prefix has no . or .. segment (the origin would read it as another path)";
  return null;
}

function uniq<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/** The binding of one entry, or the reasons its values are wrong (paths into the file). */
function bindingOf(
  name: string,
  entry: SecretsSection[string],
): { binding?: SecretBinding; errors: LoadError[] } {
  const errors: LoadError[] = [];
  const at = (key: string, i: number) => ["secrets", name, key, i];
  const what = (key: string, i: number) => `secrets.${name}.${key}[${i}]`;
  const hosts: string[] = [];
  for (const [i, host] of entry.hosts.entries()) {
    try {
      if (host.includes("/"))
        throw new InvalidArgumentError(
          `${what("hosts", i)} ${JSON.stringify(host)}: a host pattern is wanted, not a URL: write the host (e.g. api.github.com), the path under pathPrefixes: and the port under ports:.`,
        );
      if (host.includes(":"))
        throw new InvalidArgumentError(
          `${what("hosts", i)} ${JSON.stringify(host)}: write the host alone and its ports under ports:.`,
        );
      hosts.push(parseHostEntry(host, "allow", what("hosts", i)).host);
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
      errors.push({ path: at("hosts", i), text: err.message });
    }
  }
  for (const [i, m] of (entry.methods ?? []).entries())
    if (!METHOD.test(m))
      errors.push({
        path: at("methods", i),
        text: `${what("methods", i)} ${JSON.stringify(m)}: an HTTP method is letters only, e.g. GET.`,
      });
  for (const [i, p] of (entry.pathPrefixes ?? []).entries()) {
    const problem = pathPrefixProblem(p);
    if (problem)
      errors.push({
        path: at("pathPrefixes", i),
        text: `${what("pathPrefixes", i)} ${JSON.stringify(p)}: ${problem}.`,
      });
  }
  for (const [i, h] of (entry.headers ?? []).entries()) {
    if (!SECRET_HEADER_NAME.test(h.toLowerCase()))
      errors.push({
        path: at("headers", i),
        text: `${what("headers", i)} ${JSON.stringify(h)}: a header name is letters, digits and !#$%&'*+.^_\`|~- only.`,
      });
    else if (FORBIDDEN_SECRET_HEADERS.has(h.toLowerCase()))
      errors.push({
        path: at("headers", i),
        text: `${what("headers", i)} ${JSON.stringify(h)}: the gateway routes and frames requests by this header, so no secret goes there; name the header that carries the credential (e.g. authorization).`,
      });
  }
  if (errors.length > 0) return { errors };
  const binding: SecretBinding = {
    hosts: uniq(hosts),
    ports: uniq(entry.ports ?? DEFAULT_SECRET_PORTS).sort((a, b) => a - b),
    ...(entry.methods ? { methods: uniq(entry.methods.map((m) => m.toUpperCase())) } : {}),
    ...(entry.pathPrefixes ? { pathPrefixes: uniq(entry.pathPrefixes) } : {}),
    headers: uniq((entry.headers ?? DEFAULT_SECRET_HEADERS).map((h) => h.toLowerCase())),
  };
  return { binding, errors };
}

/**
 * The bindings of one section (defaults filled in: ports [443], headers [authorization]; hosts and
 * headers lower-cased, methods upper-cased), or the entries that are wrong (path into the file, and
 * why): a name that is not SECRET_NAME, a host with a port, a URL or an IP address, a method that is
 * not letters, a path prefix without a leading `/` or with a query or dot segment, a header name that
 * is not a token or is one the gateway routes by (host, content-length, transfer-encoding, connection).
 */
export function secretsSectionBindings(section: SecretsSection | undefined): {
  bindings: Record<string, SecretBinding>;
  errors: LoadError[];
} {
  const bindings: Record<string, SecretBinding> = {};
  const errors: LoadError[] = [];
  for (const [name, entry] of Object.entries(section ?? {})) {
    if (!SECRET_NAME.test(name)) {
      errors.push({
        path: ["secrets"],
        key: name,
        text: `secrets: ${JSON.stringify(name)} is not a secret name: upper-case letters, digits and _, starting with a letter, at most 64 characters (e.g. GITHUB_TOKEN).`,
      });
      continue;
    }
    const one = bindingOf(name, entry);
    errors.push(...one.errors);
    if (one.binding) bindings[name] = one.binding;
  }
  return { bindings, errors };
}

/** The hosts both patterns cover, as one pattern (the narrower), or undefined when none. */
export function hostIntersection(p: string, q: string): string | undefined {
  if (!p.startsWith("*.")) return hostMatches(q, p) ? p : undefined;
  if (!q.startsWith("*.")) return hostMatches(p, q) ? q : undefined;
  if (q.endsWith(p.slice(1))) return q;
  if (p.endsWith(q.slice(1))) return p;
  return undefined;
}

/**
 * The longer of two path prefixes when every path it covers the shorter covers too, whether a
 * prefix matches a path that merely starts with it or only at a segment boundary: the longer
 * continues the shorter with `/`, or the shorter ends with `/`, or they are equal. Prefixes that
 * overlap inside one segment (`/repos/acme`, `/repos/acmex`) give none: narrower than the
 * intersection, never wider.
 */
function pathPrefixIntersection(p: string, q: string): string | undefined {
  const [short, long] = p.length <= q.length ? [p, q] : [q, p];
  if (!long.startsWith(short)) return undefined;
  return long === short || short.endsWith("/") || long[short.length] === "/" ? long : undefined;
}

function pairs<T>(a: readonly T[], b: readonly T[], meet: (x: T, y: T) => T | undefined): T[] {
  return uniq(a.flatMap((x) => b.flatMap((y) => meet(x, y) ?? [])));
}

function common<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): T[] | undefined {
  if (a === undefined) return b && [...b];
  if (b === undefined) return [...a];
  return a.filter((x) => b.includes(x));
}

/**
 * The binding covering exactly the requests both bindings cover, with the headers both name, or
 * undefined when they share no host, port, method, path prefix or header. A missing `methods` or
 * `pathPrefixes` is any; a missing `ports` or `headers` is its default.
 */
export function intersectSecretBindings(a: SecretBinding, b: SecretBinding): SecretBinding | undefined {
  const hosts = pairs(a.hosts, b.hosts, hostIntersection);
  const ports = common(a.ports ?? DEFAULT_SECRET_PORTS, b.ports ?? DEFAULT_SECRET_PORTS) ?? [];
  const methods = common(a.methods, b.methods);
  const pathPrefixes =
    a.pathPrefixes && b.pathPrefixes
      ? pairs(a.pathPrefixes, b.pathPrefixes, pathPrefixIntersection)
      : (a.pathPrefixes ?? b.pathPrefixes);
  const headers = common(a.headers ?? DEFAULT_SECRET_HEADERS, b.headers ?? DEFAULT_SECRET_HEADERS) ?? [];
  const empty = [hosts, ports, methods ?? ["any"], pathPrefixes ?? ["any"], headers].some(
    (l) => l.length === 0,
  );
  if (empty) return undefined;
  return {
    hosts,
    ports,
    ...(methods ? { methods } : {}),
    ...(pathPrefixes ? { pathPrefixes: [...pathPrefixes] } : {}),
    headers,
  };
}

/**
 * The bindings secret `name` may be used under, given `layers` (each the bindings of one layer
 * that has a `secrets:` section, highest authority first): the intersection of every layer's
 * binding of it, as a list of at most one binding. Empty when no layer has a section, when one
 * does not name it (it withholds the secret), or when the layers' bindings share no request.
 */
export function effectiveSecretBindings(layers: readonly SecretBindings[], name: string): SecretBinding[] {
  if (layers.length === 0) return [];
  let result: SecretBinding | undefined;
  for (const [i, layer] of layers.entries()) {
    const binding = Object.hasOwn(layer, name) ? layer[name] : undefined;
    if (!binding) return [];
    result = i === 0 ? binding : result && intersectSecretBindings(result, binding);
    if (!result) return [];
  }
  if (!result) return [];
  return [
    {
      ...result,
      ports: [...(result.ports ?? DEFAULT_SECRET_PORTS)],
      headers: [...(result.headers ?? DEFAULT_SECRET_HEADERS)],
    },
  ];
}
