/**
 * Semantic checks of a schema-valid policy file, all reported at once (issue 13, item 5: one wrong
 * capital letter in `tools: [Bash]` silently switched a security rule off).
 *
 * Errors (the file does not load): duplicate rule ids, misspelt tool names, commands on a rule that
 * does not cover bash, paths on a rule whose tools take none, command patterns whose command word
 * is not a command name, a command the model does not know (see unknownCommand), `effects` on a
 * rule that is not an allow rule with commands, malformed path globs (glob.ts globProblem), `input`
 * or `actions` on a rule whose tools are not [process] or beside another matcher, an `input` entry
 * that is not a program name. Findings (`warden policy check` prints them, the file loads): rules that
 * can never decide because an earlier rule of the same file with the same or a stricter decision
 * covers everything they match.
 */

import { patternWords } from "./command-pattern.js";
import { EFFECTS } from "./commands/grammar.js";
import { COMMAND_MODEL } from "./commands/model.js";
import { globProblem } from "./glob.js";
import type { PolicyFile } from "./schema.js";
import { DECISION_RANK } from "./types.js";

/** The tools a policy rule may name: warden's seven, the opt-in process tool and `*` (src/tools/). */
const KNOWN_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "process", "*"] as const;

/** The tools whose calls run a bash script a rule's `commands` judge: bash, process (start) and `*`. */
const COMMANDS_RULE_TOOLS = new Set(["bash", "process", "*"]);

/**
 * The tools a rule's `paths` can apply to: evaluate.ts's PATH_TOOLS (a `path` argument), bash and
 * process (the paths its script names) and `*`. A rule with `paths` and none of these never
 * matches by path.
 */
const PATHS_RULE_TOOLS = new Set(["read", "edit", "write", "grep", "find", "ls", "bash", "process", "*"]);

/** A program name as `input` names it: a command's name, without a directory or a wildcard. */
const PROGRAM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

/** One problem at a place in the file: `path` is the YAML path of the node it names. */
export interface LintFinding {
  path: (string | number)[];
  text: string;
}

type Rule = PolicyFile["rules"][number];

/** A command word a pattern may start with: a name or path of one, or a glob over names. */
const COMMAND_WORD = /^[A-Za-z0-9_.\-+/*?[\]@:%,]+$/;

/** True when `a` and `b` differ by at most one edit (insert, delete, substitute). */
export function nearlyEqual(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
}

/**
 * Tool-name errors: a name must be one of warden's tools or `*`, or the name of a tool an embedder
 * adds (SessionOptions.extraTools), spelled as tools are (lowercase, `[a-z][a-z0-9_-]*`) and not
 * a near miss of a built-in one (`Bash`, `bsh`, `reed`).
 */
function toolErrors(rule: Rule, i: number): LintFinding[] {
  const out: LintFinding[] = [];
  rule.tools.forEach((tool, t) => {
    if ((KNOWN_TOOLS as readonly string[]).includes(tool)) return;
    const near = KNOWN_TOOLS.find((k) => k !== "*" && nearlyEqual(k, tool.toLowerCase().trim()));
    if (!near && /^[a-z][a-z0-9_-]*$/.test(tool)) return;
    const hint = near ? `; did you mean '${near}'?` : "";
    out.push({
      path: ["rules", i, "tools", t],
      text: `rule '${rule.id}': unknown tool '${tool}' (tools are ${KNOWN_TOOLS.join(", ")}, or a lowercase name of a tool added to the session)${hint}`,
    });
  });
  return out;
}

/**
 * The error for a command name the model has no entry for (commands/model.ts), or null. An allow
 * rule would grant such a command in every form, so it may name one only when it accepts every
 * effect (`effects: [write, exec, network]`); a deny or ask rule may name any program, unless the
 * name is one edit away from a modelled command (`rn` for `rm`: a typo that switches the rule off).
 */
function unknownCommand(rule: Rule, name: string): string | null {
  const base = name.slice(name.lastIndexOf("/") + 1);
  if (/[*?[]/.test(base) || base in COMMAND_MODEL) return null;
  const near = Object.keys(COMMAND_MODEL).find((k) => k.length > 1 && nearlyEqual(k, base));
  const hint = near ? `; did you mean '${near}'?` : "";
  if (rule.decision !== "allow")
    return near ? `rule '${rule.id}': '${base}' is not a command the model knows${hint}` : null;
  if (EFFECTS.every((e) => rule.effects?.includes(e))) return null;
  return `rule '${rule.id}': '${base}' is not a command the model knows, so its effects cannot be told apart${hint} (an allow rule may name it only with effects: [${EFFECTS.join(", ")}], accepting whatever it does)`;
}

function commandErrors(rule: Rule, i: number): LintFinding[] {
  const out: LintFinding[] = [];
  rule.commands?.forEach((pattern, c) => {
    const name = patternWords(pattern)[0] ?? "";
    const path = ["rules", i, "commands", c];
    if (name === "" || !COMMAND_WORD.test(name)) {
      out.push({
        path,
        text: `rule '${rule.id}': '${pattern}' does not start with a command name, so it never matches`,
      });
      return;
    }
    const unknown = unknownCommand(rule, name);
    if (unknown) out.push({ path, text: unknown });
  });
  if (rule.effects && (rule.decision !== "allow" || !rule.commands))
    out.push({
      path: ["rules", i, "effects"],
      text: `rule '${rule.id}': effects apply only to an allow rule with commands`,
    });
  return out;
}

/**
 * Errors of a rule's process matchers: `input` and `actions` judge only the process tool, so the
 * rule's tools must be [process] and it has no other matcher; an `input` entry is a program name.
 */
function processErrors(rule: Rule, i: number): LintFinding[] {
  const out: LintFinding[] = [];
  for (const key of ["input", "actions"] as const) {
    if (!rule[key]) continue;
    const path = ["rules", i, key];
    if (rule.tools.length !== 1 || rule.tools[0] !== "process")
      out.push({
        path,
        text: `rule '${rule.id}' has ${key}, which judges the process tool only: its tools must be [process]`,
      });
    const others = (["commands", "paths", "effects", "input", "actions"] as const).filter(
      (k) => k !== key && rule[k],
    );
    if (key === "input" || !rule.input)
      if (others.length > 0)
        out.push({
          path,
          text: `rule '${rule.id}' has ${key} and ${others.join(", ")}: a rule with ${key} takes no other matcher`,
        });
  }
  rule.input?.forEach((name, n) => {
    if (PROGRAM_NAME.test(name)) return;
    out.push({
      path: ["rules", i, "input", n],
      text: `rule '${rule.id}': input '${name}' is not a program name; name the command its process runs (python3, node, psql), without a directory or a wildcard`,
    });
  });
  return out;
}

function pathErrors(rule: Rule, i: number): LintFinding[] {
  return (rule.paths ?? []).flatMap((glob, p) => {
    const problem = globProblem(glob);
    return problem
      ? [{ path: ["rules", i, "paths", p], text: `rule '${rule.id}': path glob '${glob}' ${problem}` }]
      : [];
  });
}

/**
 * The errors of a rule that failed the schema (whose own errors the caller has) that hold whatever
 * its other fields say: misspelt tool names and malformed path globs, each where its field is a
 * list of strings. So `decision: alow` with `tools: [Bash]` reports both in one round.
 */
export function partialRuleErrors(raw: unknown, i: number): LintFinding[] {
  if (typeof raw !== "object" || raw === null) return [];
  const r = raw as Record<string, unknown>;
  const strings = (v: unknown): string[] | undefined =>
    Array.isArray(v) && v.every((x) => typeof x === "string") ? v : undefined;
  const rule = { id: typeof r.id === "string" ? r.id : `#${i + 1}`, tools: strings(r.tools) ?? [] } as Rule;
  const paths = strings(r.paths);
  return [...toolErrors(rule, i), ...(paths ? pathErrors({ ...rule, paths }, i) : [])];
}

/**
 * Errors of `file` (see module doc), in file order. Empty when the file is sound. A rule given as
 * undefined (one that failed the schema, whose errors the caller has) is skipped, so the other
 * rules' errors come in the same round.
 */
export function policyErrors(file: { rules: readonly (Rule | undefined)[] }): LintFinding[] {
  const out: LintFinding[] = [];
  const seen = new Set<string>();
  file.rules.forEach((rule, i) => {
    if (!rule) return;
    if (seen.has(rule.id)) out.push({ path: ["rules", i, "id"], text: `duplicate rule id '${rule.id}'` });
    seen.add(rule.id);
    out.push(...toolErrors(rule, i));
    if (rule.commands && !rule.tools.some((t) => COMMANDS_RULE_TOOLS.has(t))) {
      out.push({
        path: ["rules", i, "commands"],
        text: `rule '${rule.id}' has commands but its tools do not include bash or process`,
      });
    }
    if (rule.paths && !rule.tools.some((t) => PATHS_RULE_TOOLS.has(t))) {
      out.push({
        path: ["rules", i, "paths"],
        text: `rule '${rule.id}' has paths but none of its tools takes a path`,
      });
    }
    out.push(...commandErrors(rule, i));
    out.push(...pathErrors(rule, i));
    out.push(...processErrors(rule, i));
  });
  return out;
}

function coversTools(earlier: Rule, later: Rule): boolean {
  return earlier.tools.includes("*") || later.tools.every((t) => earlier.tools.includes(t));
}

/** True when pattern `a` (a prefix pattern of literal words) matches everything `b` matches. */
function patternCovers(a: string, b: string): boolean {
  const aw = patternWords(a);
  const bw = patternWords(b);
  if (aw.some((w) => /[*?[]/.test(w)) || aw.length > bw.length) return false;
  return aw.every((w, k) => w === bw[k]);
}

/** True when every subject `later` matches, `earlier` matches too. */
function ruleCovers(earlier: Rule, later: Rule): boolean {
  if (!coversTools(earlier, later)) return false;
  // A rule without matchers does not judge redirections (unless for bash) nor command arguments,
  // which only path rules do (match.ts): it covers only a later rule without paths.
  const bare = !earlier.commands && !earlier.paths && !earlier.input && !earlier.actions;
  if (bare) return !later.paths;
  if (earlier.input || earlier.actions || later.input || later.actions) {
    const within = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
      !a === !b && (b ?? []).every((x) => a?.includes(x));
    return (
      within(earlier.input, later.input) &&
      within(earlier.actions, later.actions) &&
      !later.commands &&
      !later.paths
    );
  }
  if (!earlier.commands !== !later.commands || !earlier.paths !== !later.paths) return false;
  const commands = (later.commands ?? []).every((b) => earlier.commands?.some((a) => patternCovers(a, b)));
  const paths = (later.paths ?? []).every((b) => earlier.paths?.includes(b));
  return commands && paths;
}

/**
 * Rules that can never decide anything: an earlier rule of the same file, with the same or a
 * stricter decision, matches everything they match (the strictest matching rule wins). Each
 * finding names both rules.
 */
export function shadowedRules(file: PolicyFile): LintFinding[] {
  const out: LintFinding[] = [];
  file.rules.forEach((later, i) => {
    const earlier = file.rules
      .slice(0, i)
      .find((e) => DECISION_RANK[e.decision] >= DECISION_RANK[later.decision] && ruleCovers(e, later));
    if (earlier) {
      out.push({
        path: ["rules", i, "id"],
        text: `rule '${later.id}' never decides: the earlier rule '${earlier.id}' (${earlier.decision}) matches everything it matches`,
      });
    }
  });
  return out;
}
