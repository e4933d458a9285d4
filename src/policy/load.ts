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
import { omitUndefined } from "../util/index.js";
import { NetworkSectionSchema, networkSectionRules } from "./network-section.js";
import { partialRuleErrors, policyErrors, shadowedRules } from "./policy-lint.js";
import { type PolicyFile, PolicyFileSchema, RuleSchema } from "./schema.js";
import { describeSchemaErrors, type SchemaError, schemaErrorGroups, withMeantKeys } from "./schema-errors.js";
import { SecretsSectionSchema, secretsSectionBindings } from "./secrets-section.js";
import { LAYER_NAMES, type Policy, type PolicyLayer } from "./types.js";

const checker = Compile(PolicyFileSchema);

const ruleChecker = Compile(RuleSchema);
const networkChecker = Compile(NetworkSectionSchema);
const secretsChecker = Compile(SecretsSectionSchema);
const RULE_KEYS = Object.keys(RuleSchema.properties);

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
 * Every error of a parsed file in one list, in document order: the schema's, and the semantic ones
 * (policy-lint.ts, the network and secrets sections) of each rule and section that passed the schema, so one
 * wrong rule does not hide another's error until the next run.
 */
function fileErrors(
  value: unknown,
  valid: boolean,
): { path: (string | number)[]; key?: string; text: string }[] {
  const schema = valid
    ? []
    : schemaErrorGroups([...checker.Errors(value)] as SchemaError[]).flatMap(describeSchemaErrors);
  const file = (typeof value === "object" && value !== null ? value : {}) as Partial<PolicyFile>;
  // A rule whose only fault is a misspelt key is checked as meant, so its other errors come now too.
  const asMeant = (r: unknown) => (ruleChecker.Check(r) ? r : withMeantKeys(r, RULE_KEYS));
  const meant = Array.isArray(file.rules) ? file.rules.map(asMeant) : [];
  const rules = meant.map((r) => (ruleChecker.Check(r) ? r : undefined));
  // A rule that failed the schema still gets the checks its other fields allow.
  const partial = meant.flatMap((r, i) => (rules[i] ? [] : partialRuleErrors(r, i)));
  const network = networkChecker.Check(file.network) ? networkSectionRules(file.network).errors : [];
  const secrets = secretsChecker.Check(file.secrets) ? secretsSectionBindings(file.secrets).errors : [];
  return [...schema, ...policyErrors({ rules }), ...partial, ...network, ...secrets];
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
  const valid = checker.Check(value);
  const errors = fileErrors(value, valid)
    .map((e) => ({ offset: offsetOf(doc, e.path, e.key), text: e.text }))
    .sort((a, b) => a.offset - b.offset);
  if (errors.length > 0 || !valid) {
    const lines = errors.map((e) => `${where(e.offset)}: ${e.text}`);
    throw new PolicyInvalidError([...new Set(lines)].join("\n"));
  }
  const parsed = value as PolicyFile;
  const network = networkSectionRules(parsed.network);
  const findings = shadowedRules(parsed).map((f) => `${where(offsetOf(doc, f.path))}: ${f.text}`);
  return {
    layer: parsed.layer ?? LAYER_NAMES[position] ?? `layer-${position}`,
    file,
    ...omitUndefined({ name: parsed.name, description: parsed.description, default: parsed.default }),
    nonInteractive: parsed.nonInteractive ?? false,
    ...(parsed.maxCommandBytes !== undefined ? { maxCommandBytes: parsed.maxCommandBytes } : {}),
    rules: parsed.rules,
    tests: (parsed.tests ?? []) as PolicyLayer["tests"],
    ...(parsed.network ? { network: network.rules } : {}),
    ...(parsed.secrets ? { secrets: secretsSectionBindings(parsed.secrets).bindings } : {}),
    findings,
  };
}

/**
 * Loads policy files as layers, highest authority first (operator > tenant > project > session).
 * A file's `layer:` must not claim more authority than a file before it; a file without one is
 * named by its position (operator, tenant, project, session), never above the file before it.
 * Throws PolicyInvalidError for unreadable, malformed or misordered files: every unreadable or
 * malformed file's errors at once, one per line.
 */
export async function loadPolicy(files: string[]): Promise<Policy> {
  const layers: PolicyLayer[] = [];
  const errors: string[] = [];
  const rank = (l: PolicyLayer) => LAYER_NAMES.indexOf(l.layer as (typeof LAYER_NAMES)[number]);
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      errors.push(`${file}: cannot read the policy file (${(err as Error).message})`);
      continue;
    }
    // A file without `layer:` is named by its position, never above the file before it.
    const previous = layers.at(-1);
    try {
      layers.push(parsePolicyText(text, file, Math.max(i, previous ? rank(previous) : 0)));
    } catch (err) {
      if (!(err instanceof PolicyInvalidError)) throw err;
      errors.push(err.message);
    }
  }
  // Every file's errors in one round, not one file per run.
  if (errors.length > 0) throw new PolicyInvalidError(errors.join("\n"));
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
