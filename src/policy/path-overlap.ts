/**
 * Conservative matching of a word the shell expands against a path rule (issue 13, item 3):
 * `cat .en?`, `cat {.env,}`, `cat ~/.ssh/*` and `cat "$D"/.env` must meet a rule denying `.env`
 * although no literal path is written. The word (ArgWord.glob) and the rule's glob (glob.ts syntax)
 * are both sets of paths; mayOverlap answers whether the sets may share a path. It may answer yes
 * for sets that do not meet (never the other way round): bash's dotfile rule is ignored, a
 * character class is assumed to meet any other, and an expansion stands for any text, `/` included.
 */
import { ANY_TEXT, type Found } from "./command-pattern.js";

/** Home of the sandbox user (images/sandbox/Dockerfile), where the shell expands `~`. */
export const SANDBOX_HOME = "/home/sandbox";

/** More brace alternatives than this and the word is taken to stand for any path. */
const MAX_ALTERNATIVES = 64;

type Token =
  | { kind: "star" }
  | { kind: "one" }
  | { kind: "char"; ch: string }
  | { kind: "class" }
  /** First token of a word component starting with a wildcard: bash matches no leading dot there. */
  | { kind: "nodot" };
/**
 * A path segment: `**` (any number of components), `**.` (any number of components none of which
 * begins with a dot: the directories fd or rg walk without `--hidden`) or the tokens of one component.
 */
type Segment = "**" | "**." | Token[];

/** Index of the brace closing the one at `open`, or -1. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Splits a brace body at its top-level commas. */
function alternatives(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}") depth--;
    else if (ch === "," && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
  }
  out.push(body.slice(start));
  return out;
}

/**
 * Brace expansion of an unescaped glob, bash's way: `{a,b}` alternatives, nested; a brace without
 * a comma stays literal. Sequences (`{1..3}`) stand for any text. Null past MAX_ALTERNATIVES.
 */
export function expandBraces(glob: string): string[] | null {
  const open = [...glob].findIndex((ch, i) => ch === "{" && glob[i - 1] !== "\\");
  if (open === -1) return [glob];
  const close = closingBrace(glob, open);
  if (close === -1) return [glob];
  const body = glob.slice(open + 1, close);
  const head = glob.slice(0, open);
  const tail = glob.slice(close + 1);
  const options = alternatives(body);
  let bodies: string[];
  if (options.length > 1) bodies = options;
  else if (/\.\./.test(body)) bodies = [ANY_TEXT];
  else bodies = [`\\{${body}\\}`];
  const out: string[] = [];
  for (const b of bodies) {
    const rest = expandBraces(`${head}${b}${tail}`);
    if (!rest) return null;
    out.push(...rest);
    if (out.length > MAX_ALTERNATIVES) return null;
  }
  return out;
}

/** `expanded`: the component's start comes from an expansion, which may begin with a dot. */
function tokens(component: string, expanded = false): Token[] {
  const out: Token[] = !expanded && /^[*?[]/.test(component) ? [{ kind: "nodot" }] : [];
  for (let i = 0; i < component.length; i++) {
    const ch = component[i] as string;
    if (ch === "\\" && i + 1 < component.length) out.push({ kind: "char", ch: component[++i] as string });
    else if (ch === "*" || ch === ANY_TEXT) out.push({ kind: "star" });
    else if (ch === "?") out.push({ kind: "one" });
    else if (ch === "[" && component.indexOf("]", i + 2) !== -1) {
      out.push({ kind: "class" });
      i = component.indexOf("]", i + 2);
    } else out.push({ kind: "char", ch });
  }
  return out;
}

/**
 * Splits at unescaped `/`; a component holding ANY_TEXT may span components, so `**` precedes it.
 * `found`: the path a listing printed (Found): with `hidden`, every component may begin with a dot
 * (fnmatch without FNM_PERIOD); without, none does (`**.`, and `*` matches no leading dot).
 */
function segments(path: string, found?: Found): Segment[] {
  const out: Segment[] = [];
  let current = "";
  const visible = found !== undefined && !found.hidden;
  const flush = () => {
    if (current.includes(ANY_TEXT))
      out.push(
        visible ? "**." : "**",
        tokens(`*${current.slice(current.lastIndexOf(ANY_TEXT) + 1)}`, !visible),
      );
    else if (current !== "" && current !== ".") out.push(tokens(current, found?.hidden === true));
    current = "";
  };
  for (let i = 0; i < path.length; i++) {
    const ch = path[i] as string;
    if (ch === "\\" && i + 1 < path.length) current += ch + path[++i];
    else if (ch === "/") flush();
    else current += ch;
  }
  flush();
  return out;
}

function tokensMeet(a: Token, b: Token): boolean {
  return a.kind !== "char" || b.kind !== "char" || a.ch === b.ch;
}

/**
 * Whether two sequences of patterns may match one same sequence: `star` items match any run
 * (zero or more) of items that `eats` accepts, others match one item when `meet` says they can.
 * Memoised, O(|a|·|b|).
 */
function sequencesMeet<T>(
  a: T[],
  b: T[],
  star: (x: T) => boolean,
  meet: (x: T, y: T) => boolean,
  eats: (star: T, item: T) => boolean = () => true,
): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let ok: boolean;
    const x = a[i];
    const y = b[j];
    if (x === undefined && y === undefined) ok = true;
    else if (x !== undefined && star(x)) ok = go(i + 1, j) || (y !== undefined && eats(x, y) && go(i, j + 1));
    else if (y !== undefined && star(y)) ok = go(i, j + 1) || (x !== undefined && eats(y, x) && go(i + 1, j));
    else ok = x !== undefined && y !== undefined && meet(x, y) && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

/** Whether two component patterns may match one same name. */
function componentsMeet(x: Token[], y: Token[]): boolean {
  const dot = (t: Token[]) => t[0]?.kind === "char" && t[0].ch === ".";
  if ((x[0]?.kind === "nodot" && dot(y)) || (y[0]?.kind === "nodot" && dot(x))) return false;
  const a = x.filter((t) => t.kind !== "nodot");
  const b = y.filter((t) => t.kind !== "nodot");
  return sequencesMeet(a, b, (t) => t.kind === "star", tokensMeet);
}

/** Whether two segment lists may match one same path. */
function pathsMeet(a: Segment[], b: Segment[]): boolean {
  const leadingDot = (s: Segment) => typeof s !== "string" && s[0]?.kind === "char" && s[0].ch === ".";
  return sequencesMeet(
    a,
    b,
    (s) => typeof s === "string",
    (x, y) => componentsMeet(x as Token[], y as Token[]),
    (star, item) => star === "**" || !leadingDot(item),
  );
}

/**
 * The absolute path globs a word's glob stands for, relative ones taken against `cwd`, `~` as
 * the sandbox home; null when it may be any path (too many alternatives).
 */
export function wordPathGlobs(glob: string, cwd: string): string[] | null {
  const expanded = expandBraces(glob);
  if (!expanded) return null;
  return expanded.map((g) => {
    let path = g;
    if (path === "~" || path.startsWith("~/")) path = `${SANDBOX_HOME}${path.slice(1)}`;
    else if (path.startsWith("~")) {
      // `~user/rest` keeps `rest`; only root's home is known, any other (`~bob`, `~+`, `~-`) may be anywhere.
      const slash = path.indexOf("/");
      const user = slash === -1 ? path.slice(1) : path.slice(1, slash);
      path = `${user === "root" ? "/root" : ANY_TEXT}${slash === -1 ? "" : path.slice(slash)}`;
    }
    return path.startsWith("/") || path.startsWith(ANY_TEXT) ? path : `${cwd}/${path}`;
  });
}

/**
 * True when some path the word glob `word` (already absolute: wordPathGlobs) stands for may match
 * the rule glob `rule` (glob.ts syntax; a relative rule matches at any depth). `found`: `word` is
 * a path a listing printed, whose names follow that listing's dot rule (Found) instead of bash's.
 */
export function mayOverlap(rule: string, word: string, found?: Found): boolean {
  const ruleGlobs = expandBraces(rule.startsWith("/") ? rule : `**/${rule}`) ?? ["**"];
  const wordSegments = segments(word, found);
  return ruleGlobs.some((r) => pathsMeet(segments(r.replace(/\*\*/g, "\u0002")).map(star2), wordSegments));
}

/** Turns the placeholder component for `**` back into the `**` segment. */
function star2(segment: Segment): Segment {
  return typeof segment !== "string" &&
    segment.length === 1 &&
    segment[0]?.kind === "char" &&
    segment[0].ch === "\u0002"
    ? "**"
    : segment;
}
