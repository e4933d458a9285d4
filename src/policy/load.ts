/**
 * Loading policy files: YAML or JSON (JSON is parsed as YAML 1.2, so both report positions),
 * validated with TypeBox and policy-lint.ts; a PolicyInvalidError lists every error of the file, one
 * per line, each naming file:line:column and what
 * was expected there.
 */
import { readFile } from "node:fs/promises";
import { Compile } from "typebox/compile";
import { type Document, isMap, isScalar, LineCounter, parseDocument } from "yaml";
import { PolicyInvalidError } from "../errors.js";
import { networkSectionRules } from "./network-section.js";
import { policyErrors, shadowedRules } from "./policy-lint.js";
import { type PolicyFile, PolicyFileSchema } from "./schema.js";
import { LAYER_NAMES, type Policy, type PolicyLayer } from "./types.js";

const checker = Compile(PolicyFileSchema);

interface SchemaError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
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

/** Source offset of the node at `path`, or of its key `key` when given. */
function offsetOf(doc: Document, path: (string | number)[], key?: string): number {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (key !== undefined && n === path.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
      if (range) return range[0];
    }
    if (node?.range) return node.range[0];
  }
  return 0;
}

/**
 * Schema errors grouped by the node they are about, in document order: each group is described
 * once, so every wrong node of a file is reported at once.
 */
function schemaErrorGroups(errors: SchemaError[]): SchemaError[][] {
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

/** Words what was expected for the first meaningful schema error of one node. */
function describe(errors: SchemaError[]): { path: (string | number)[]; key?: string; text: string } {
  const meaningful = errors.filter((e) => e.keyword !== "boolean");
  const first = meaningful.find((e) => e.keyword !== "anyOf" && e.keyword !== "const") ?? meaningful[0];
  if (!first) return { path: [], text: "invalid policy" };
  const path = pointerToPath(first.instancePath);
  const at = displayPath(path) || "the top level";
  if (first.keyword === "additionalProperties") {
    const key = String((first.params.additionalProperties as unknown[] | undefined)?.[0] ?? "?");
    return { path, key, text: `unknown key '${key}' in ${at}` };
  }
  if (first.keyword === "required") {
    const missing = (first.params.requiredProperties as unknown[] | undefined)?.join(", ") ?? "?";
    return { path, text: `${at} is missing required key(s): ${missing}` };
  }
  if (first.keyword === "const" || first.keyword === "anyOf") {
    const allowed = errors
      .filter((e) => e.keyword === "const" && e.instancePath === first.instancePath)
      .map((e) => JSON.stringify(e.params.allowedValue));
    return { path, text: `${at}: expected one of ${allowed.join(" | ")}` };
  }
  return { path, text: `${at}: ${first.message}` };
}

/**
 * Parses and validates one policy file's text. `position` (0-based) names the layer when the file
 * has no `layer:` key. Throws PolicyInvalidError("file:line:col: ...").
 */
export function parsePolicyText(text: string, file: string, position = 0): PolicyLayer {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${file}:${line}:${col}`;
  };
  const syntax = doc.errors[0];
  if (syntax) {
    throw new PolicyInvalidError(
      `${where(syntax.pos[0])}: not valid YAML/JSON: ${syntax.message.split("\n")[0]}`,
    );
  }
  const value: unknown = doc.toJS();
  if (!checker.Check(value)) {
    const described = schemaErrorGroups([...checker.Errors(value)] as SchemaError[]).map(describe);
    const lines = described.map(({ path, key, text }) => `${where(offsetOf(doc, path, key))}: ${text}`);
    throw new PolicyInvalidError([...new Set(lines)].join("\n"));
  }
  const parsed = value as PolicyFile;
  const network = networkSectionRules(parsed.network);
  const errors = [...policyErrors(parsed), ...network.errors];
  if (errors.length > 0) {
    throw new PolicyInvalidError(errors.map((e) => `${where(offsetOf(doc, e.path))}: ${e.text}`).join("\n"));
  }
  const findings = shadowedRules(parsed).map((f) => `${where(offsetOf(doc, f.path))}: ${f.text}`);
  return {
    layer: parsed.layer ?? LAYER_NAMES[position] ?? `layer-${position}`,
    file,
    name: parsed.name,
    description: parsed.description,
    default: parsed.default,
    nonInteractive: parsed.nonInteractive ?? false,
    ...(parsed.maxCommandBytes !== undefined ? { maxCommandBytes: parsed.maxCommandBytes } : {}),
    rules: parsed.rules,
    tests: (parsed.tests ?? []) as PolicyLayer["tests"],
    ...(parsed.network ? { network: network.rules } : {}),
    findings,
  };
}

/**
 * Loads policy files as layers, highest authority first (operator > tenant > project > session).
 * A file's `layer:` must not claim more authority than a file before it; a file without one is
 * named by its position (operator, tenant, project, session), never above the file before it.
 * Throws PolicyInvalidError for unreadable, malformed or misordered files.
 */
export async function loadPolicy(files: string[]): Promise<Policy> {
  const layers: PolicyLayer[] = [];
  const rank = (l: PolicyLayer) => LAYER_NAMES.indexOf(l.layer as (typeof LAYER_NAMES)[number]);
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      throw new PolicyInvalidError(`${file}: cannot read the policy file (${(err as Error).message})`);
    }
    // A file without `layer:` is named by its position, never above the file before it.
    const previous = layers.at(-1);
    layers.push(parsePolicyText(text, file, Math.max(i, previous ? rank(previous) : 0)));
  }
  for (let i = 1; i < layers.length; i++) {
    const prev = layers[i - 1] as PolicyLayer;
    const cur = layers[i] as PolicyLayer;
    if (rank(cur) >= 0 && rank(prev) > rank(cur)) {
      throw new PolicyInvalidError(
        `${cur.file}: layer '${cur.layer}' comes after '${prev.layer}' (${prev.file}); pass files highest authority first: ${LAYER_NAMES.join(" > ")}`,
      );
    }
  }
  return { layers };
}
