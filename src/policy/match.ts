/**
 * Pure policy matching: which rules of which layer match one subject (a bash command part, a
 * path, a redirection, a whole call), and the decision across layers. No I/O.
 *
 * Within a layer the strictest matching rule wins (deny > ask > allow); with no match the layer's
 * `default` applies, or the layer abstains when it has none. Across layers the strictest answer
 * wins, so a lower layer may tighten but never loosen what a higher layer denies or asks. When
 * every layer abstains the answer is `ask`.
 */

import { ANY_TEXT, type ArgWord, type Found, matchCommand, patternWords } from "./command-pattern.js";
import type { FormVerdict } from "./commands/grammar.js";
import { matchGlob } from "./glob.js";
import { mayOverlap } from "./path-overlap.js";
import {
  DECISION_RANK,
  type Policy,
  type PolicyDecisionKind,
  type PolicyLayer,
  type PolicyRule,
  stricter,
  type TrailEntry,
} from "./types.js";

/** What one trail entry judges. `tools` are the tool names whose rules apply to it. */
export type Subject =
  | {
      kind: "command";
      tools: string[];
      argv: ArgWord[];
      role: "command" | "wrapper";
      text: string;
      via: string[];
      form?: FormVerdict;
      /** BashPart's `cwd`: the directory a wrapper runs it in (null: not known). */
      cwd?: string | null;
    }
  | { kind: "opaque"; tools: string[]; text: string; why: string; via: string[] }
  | { kind: "path" | "write" | "read"; tools: string[]; path: string; via: string[] }
  /** A command argument that may be a file: judged by deny and ask path rules only, never a default. */
  | {
      kind: "argument";
      tools: string[];
      path: string;
      via: string[];
      glob?: boolean;
      /** Why a glob stands for any path (a git object tied to no path: commands/git-revisions.ts). */
      why?: string;
      /** A path a listing printed, in the directory it searched or below it (ruleMatches). */
      found?: Found;
      /** The word as the script writes it, shown in the trail instead of the glob. */
      word?: string;
    }
  /**
   * A call judged by its tool's name; a process tool's call also by its action, and input by the
   * program it goes to (only when a rule names that program: else the input is opaque).
   */
  | { kind: "call"; tools: string[]; text: string; action?: string; program?: string };

/** A rule's command patterns split into words, by the basename of their command word. */
interface PatternIndex {
  /** The patterns of one name, followed by the wild ones. */
  byName: Map<string, string[][]>;
  /** Patterns whose command word is a glob or `*`: tried for every command. */
  wild: string[][];
  all: string[][];
}

const indexes = new WeakMap<string[], PatternIndex>();

function basename(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
}

/**
 * The patterns of `commands`, indexed once per rule: a command is matched only against the
 * patterns of its own name (and the wild ones), not all of them (a script of thousands of parts
 * under a policy of ~100 patterns spent most of its time here).
 */
function patternIndex(commands: string[]): PatternIndex {
  let index = indexes.get(commands);
  if (index) return index;
  index = { byName: new Map(), wild: [], all: [] };
  for (const pattern of commands) {
    const words = patternWords(pattern);
    index.all.push(words);
    const name = basename(words[0] ?? "");
    if (/[*?]/.test(name)) index.wild.push(words);
    else index.byName.set(name, [...(index.byName.get(name) ?? []), words]);
  }
  for (const [name, named] of index.byName) index.byName.set(name, [...named, ...index.wild]);
  indexes.set(commands, index);
  return index;
}

/** The patterns that may match a command named `name` (all of them when the name is not literal). */
function candidates(commands: string[], name: ArgWord | undefined): string[][] {
  const index = patternIndex(commands);
  if (!name || name.value === null || name.expands) return index.all;
  return index.byName.get(basename(name.value)) ?? index.wild;
}

/** An allow rule grants a modelled command only in forms it knows, with effects the rule accepts. */
function formAllowed(rule: PolicyRule, form: FormVerdict | undefined): boolean {
  if (!form) return true;
  if (form.unknown) return false;
  return form.effects.every((e) => rule.effects?.includes(e));
}

/** Why no allow rule granted a modelled command's form, or null. */
function formReason(form: FormVerdict | undefined): string | null {
  if (!form) return null;
  if (form.unknown) return `not auto-allowed: ${form.unknown}`;
  return form.effects.length > 0
    ? `this form ${form.effects.map((e) => EFFECT_WORDS[e]).join(" and ")}; no allow rule accepts that effect`
    : null;
}

const EFFECT_WORDS = {
  write: "writes files",
  exec: "runs other programs",
  network: "reaches the network",
} as const;

/** Tools whose calls run a bash script (the process tool's start). */
const SCRIPT_TOOLS = new Set(["bash", "process"]);

/** True when `rule` covers one of the subject's tools and its matchers match the subject. */
export function ruleMatches(rule: PolicyRule, subject: Subject): boolean {
  if (!rule.tools.some((t) => t === "*" || subject.tools.includes(t))) return false;
  const bare = !rule.commands && !rule.paths && !rule.input && !rule.actions;
  switch (subject.kind) {
    case "command": {
      if (!rule.commands) return bare;
      const mode = rule.decision === "allow" ? "allow" : "restrict";
      if (mode === "allow" && !formAllowed(rule, subject.form)) return false;
      return candidates(rule.commands, subject.argv[0]).some((p) => matchCommand(p, subject.argv, mode));
    }
    case "path":
      return rule.paths ? rule.paths.some((g) => matchGlob(g, subject.path)) : bare;
    case "argument":
      if (rule.decision === "allow" || !rule.paths) return false;
      if (!subject.glob) return rule.paths.some((g) => matchGlob(g, subject.path));
      // A path a listing printed may lie at any depth below the directory it searched, in any
      // directory the listing walks: every rule meets it (`config` meets `**/.git/config`, any
      // name `**/.ssh/**` when the listing walks dot directories), by the listing's own dot rule
      // (path-overlap.ts).
      // A name split at blanks may leave any path (`x .env.md` gives `.env.md`).
      if (subject.found?.split) return rule.paths.some((g) => mayOverlap(g, ANY_TEXT));
      return rule.paths.some((g) => mayOverlap(g, subject.path, subject.found));
    case "write":
    case "read":
      // A redirection is judged by path rules of bash / write / read, and by bare rules of bash (or
      // process, for its start) only: a rule denying the write tool outright says nothing about
      // `2>/dev/null`.
      if (!rule.paths)
        return (
          bare && rule.tools.some((t) => t === "*" || (SCRIPT_TOOLS.has(t) && subject.tools.includes(t)))
        );
      return rule.paths.some((g) => matchGlob(g, subject.path));
    case "opaque":
      return bare;
    case "call":
      if (rule.input) return subject.program !== undefined && rule.input.includes(subject.program);
      if (rule.actions) return rule.actions.some((a) => a === subject.action);
      return bare;
  }
}

interface LayerAnswer {
  decision: PolicyDecisionKind;
  rule?: PolicyRule;
}

/** One layer's answer for a subject, or undefined when it abstains. */
function judgeLayer(layer: PolicyLayer, subject: Subject): LayerAnswer | undefined {
  let best: PolicyRule | undefined;
  for (const rule of layer.rules) {
    if (!ruleMatches(rule, subject)) continue;
    // A wrapper is judged by deny / ask rules only: its payload is judged on its own.
    if (subject.kind === "command" && subject.role === "wrapper" && rule.decision === "allow") continue;
    if (!best || DECISION_RANK[rule.decision] > DECISION_RANK[best.decision]) best = rule;
  }
  if (best) return { decision: best.decision, rule: best };
  if ((subject.kind === "command" && subject.role === "wrapper") || subject.kind === "argument")
    return undefined;
  return layer.default ? { decision: layer.default } : undefined;
}

/**
 * The part a trail entry shows: a command's text, a path, or for an argument the shell expands
 * the word as written with the paths it may name (ANY_TEXT, an internal mark, shown as `…`).
 */
function describeSubject(subject: Subject): string {
  if (subject.kind === "command" || subject.kind === "opaque" || subject.kind === "call") return subject.text;
  if (subject.kind === "argument" && subject.path.includes(ANY_TEXT)) {
    const paths = subject.path.replaceAll(ANY_TEXT, "…");
    return subject.word !== undefined ? `${subject.word} (may name ${paths})` : paths;
  }
  return subject.path;
}

/** The trail entry for one subject: the strictest layer answer (see module doc). */
export function judge(policy: Policy, subject: Subject): TrailEntry {
  let decision: PolicyDecisionKind | undefined;
  let rule: PolicyRule | undefined;
  let layer: string | undefined;
  for (const l of policy.layers) {
    const answer = judgeLayer(l, subject);
    if (!answer) continue;
    if (decision === undefined || DECISION_RANK[answer.decision] > DECISION_RANK[decision]) {
      decision = answer.decision;
      rule = answer.rule;
      layer = l.layer;
    }
  }
  const entry: TrailEntry = {
    kind: subject.kind,
    part: describeSubject(subject),
    decision: decision ?? "ask",
  };
  if (subject.kind === "command" && subject.role === "wrapper" && decision === undefined) {
    entry.decision = "allow";
    entry.reason = "wrapper: its payload is judged separately";
  } else if (subject.kind === "argument" && decision === undefined) {
    entry.decision = "allow";
    entry.reason = "argument: only deny and ask path rules apply";
  } else if (subject.kind === "argument" && subject.glob && decision === "deny") {
    // The word may expand to a denied path, or may not: not auto-allowed, and asked.
    entry.decision = "ask";
    const may = subject.why ? `${subject.why}; it ` : "";
    entry.reason = `${may}may expand to a path that rule '${rule?.id}' denies${rule?.reason ? ` (${rule.reason})` : ""}`;
    rule = undefined;
  } else if (subject.kind === "opaque") {
    // Never allow what cannot be seen.
    entry.decision = stricter(decision ?? "ask", "ask");
    entry.reason = subject.why;
    if (decision !== "deny") rule = undefined;
  }
  if (subject.kind === "command" && decision !== "allow" && !rule) {
    const why = formReason(subject.form);
    if (why) entry.reason = why;
  }
  if (rule) {
    entry.ruleId = rule.id;
    if (rule.reason) entry.reason = rule.reason;
  } else if (decision !== undefined && subject.kind !== "opaque") {
    entry.ruleId = "default";
  }
  if (layer && (rule || entry.ruleId === "default")) entry.layer = layer;
  if ("via" in subject && subject.via.length > 0) entry.via = subject.via;
  return entry;
}
