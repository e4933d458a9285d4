/**
 * Words a policy file's schema errors (TypeBox's, JSON-Schema style) for people: one line per
 * wrong node, each naming the YAML path and what was expected there. An unknown key is named as
 * unknown, with the known key it is one edit away from (`decison` → "did you mean 'decision'?"),
 * and a required key it stands for is not reported missing as well.
 */
import { nearlyEqual } from "./policy-lint.js";
import { PolicyFileSchema } from "./schema.js";

/** One TypeBox error (the fields used here). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

/** One described problem: the YAML path of the node (and of its key, for an unknown key). */
export interface DescribedError {
  path: (string | number)[];
  key?: string;
  text: string;
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function displayPath(path: (string | number)[]): string {
  return path.reduce<string>(
    (acc, seg) => (typeof seg === "number" ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg),
    "",
  );
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  patternProperties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** The keys an object at `path` of a policy file may have (PolicyFileSchema), or none. */
function knownKeys(path: (string | number)[]): string[] {
  let node: SchemaNode | undefined = PolicyFileSchema as SchemaNode;
  // A record's values (`secrets:`, keyed by name) share one schema, its pattern property's.
  const childOf = (n: SchemaNode | undefined, key: string) =>
    n?.properties?.[key] ?? Object.values(n?.patternProperties ?? {})[0];
  for (const seg of path) node = typeof seg === "number" ? node?.items : childOf(node, seg);
  return Object.keys(node?.properties ?? {});
}

/** The known key `key` is one edit (or only letter case) away from, if any. */
function nearMissKey(known: readonly string[], key: string): string | undefined {
  return known.find((k) => nearlyEqual(k, key) || k.toLowerCase() === key.toLowerCase());
}

/**
 * `value` (an object of a policy file) as its author meant it, for the semantic checks that run
 * beside the schema's errors: each unknown key renamed to its near miss (when that key is not
 * there already), other unknown keys dropped. Anything else is returned as it is.
 */
export function withMeantKeys(value: unknown, known: readonly string[]): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  for (const [key, v] of entries) if (known.includes(key)) out[key] = v;
  for (const [key, v] of entries) {
    const meant = known.includes(key) ? undefined : nearMissKey(known, key);
    if (meant && !(meant in out)) out[meant] = v;
  }
  return out;
}

/**
 * Schema errors grouped by the node they are about, in document order: each group is described
 * once, so every wrong node of a file is reported at once.
 */
export function schemaErrorGroups(errors: SchemaError[]): SchemaError[][] {
  const groups = new Map<string, SchemaError[]>();
  for (const e of errors) groups.set(e.instancePath, [...(groups.get(e.instancePath) ?? []), e]);
  for (const [path, group] of groups) if (group.every((e) => e.keyword === "boolean")) groups.delete(path);
  const paths = [...groups.keys()];
  // A union's own error (anyOf) is implied by its member's deeper errors: keep the deepest.
  return paths
    .filter(
      (p) =>
        !paths.some(
          (q) =>
            q !== p &&
            q.startsWith(`${p}/`) &&
            groups.get(p)?.every((e) => e.keyword === "anyOf" || e.keyword === "boolean"),
        ),
    )
    .map((p) => groups.get(p) as SchemaError[]);
}

/** Unknown keys of one object, each with its near miss; then the required keys none stands for. */
function describeKeys(errors: SchemaError[], path: (string | number)[], at: string): DescribedError[] {
  const known = knownKeys(path);
  const keys = [
    ...new Set(
      errors
        .filter((e) => e.keyword === "additionalProperties")
        .flatMap((e) => (e.params.additionalProperties as unknown[] | undefined) ?? [])
        .map(String),
    ),
  ];
  const meant = new Set<string>();
  const out: DescribedError[] = keys.map((key) => {
    const near = nearMissKey(known, key);
    if (near) meant.add(near);
    const hint = near ? ` (did you mean '${near}'?)` : ` (known keys: ${known.join(", ")})`;
    return { path, key, text: `unknown key '${key}' in ${at}${hint}` };
  });
  const missing = errors
    .filter((e) => e.keyword === "required")
    .flatMap((e) => (e.params.requiredProperties as unknown[] | undefined) ?? [])
    .map(String)
    .filter((k) => !meant.has(k));
  if (missing.length > 0) out.push({ path, text: `${at} is missing required key(s): ${missing.join(", ")}` });
  return out;
}

/** Words what was expected at one node (see module doc): one line, or one per unknown key. */
export function describeSchemaErrors(errors: SchemaError[]): DescribedError[] {
  const meaningful = errors.filter((e) => e.keyword !== "boolean");
  const first = meaningful.find((e) => e.keyword !== "anyOf" && e.keyword !== "const") ?? meaningful[0];
  if (!first) return [{ path: [], text: "invalid policy" }];
  const path = pointerToPath(first.instancePath);
  const at = displayPath(path) || "the top level";
  if (meaningful.some((e) => e.keyword === "additionalProperties")) return describeKeys(meaningful, path, at);
  if (first.keyword === "required") return describeKeys(meaningful, path, at);
  if (first.keyword === "const" || first.keyword === "anyOf") {
    const allowed = errors
      .filter((e) => e.keyword === "const" && e.instancePath === first.instancePath)
      .map((e) => JSON.stringify(e.params.allowedValue));
    return [{ path, text: `${at}: expected one of ${allowed.join(" | ")}` }];
  }
  return [{ path, text: `${at}: ${first.message}` }];
}
