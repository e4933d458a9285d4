/**
 * Reads an argv against a command's option grammar (commands/model.ts) the way its own parser
 * would, and says what the form does (issue 13, item 1): short option clusters (`-xrm` is `-x rm`),
 * attached values (`-f.env`), `--opt=value`, long-option abbreviations as getopt_long resolves them
 * (`--s=` is `--split-string=`, `--del` is `--delete`), subcommands, and `--` ending the options.
 * An option the grammar does not know, or a word before `--` that is not literal (`${X:--x}` may
 * become an option), makes the form unknown: never auto-allowed.
 */
import type { ArgWord } from "../command-pattern.js";

/** What a form of a command does besides reading its operands and printing. */
export type Effect = "write" | "exec" | "network";
export const EFFECTS: readonly Effect[] = ["write", "exec", "network"];

/**
 * One command's grammar. Long options: `name` a flag, `name=` takes a value (`--name v` or
 * `--name=v`), `name?` takes one only attached (`--name=v`).
 */
export interface Grammar {
  /** Short flags, one letter each. */
  short?: string;
  /** Short options taking a value (`-t f`, `-tf`). */
  shortValue?: string;
  long?: string[];
  /** Option (a letter or a long name) → what it does. */
  effects?: Record<string, Effect>;
  /** Options that are not known are taken as free flags (git's diff family has hundreds); only
   * words that are an effect option or an abbreviation of one count. */
  permissive?: boolean;
  /** Subcommands, chosen by the first operand. */
  sub?: Record<string, Grammar>;
  /** Effect of any operand at all (`git branch NAME` creates a branch), unless a listed option is present. */
  operandEffect?: { effect: Effect; unless: string[] };
  /** The first operand and the rest are a command this one runs (handled by bash/wrappers.ts). */
  payload?: boolean;
  /** Judges the operands (a sed script): an effect or "unknown: why", or null. */
  operands?: (
    operands: string[],
    options: string[],
    values: [string, string | null][],
  ) => Effect | `unknown: ${string}` | null;
  /**
   * Files the operands name as written (awk's `print > F`), with the same arguments as `operands`:
   * a literal name, or null for one that is computed (the part is then opaque).
   */
  operandWrites?: (
    operands: string[],
    options: string[],
    values: [string, string | null][],
  ) => (string | null)[];
  /** Options are written with one dash (`-exec`, Go's flag package). */
  singleDash?: boolean;
  /** Long option names are matched whatever their case (tsc: `--OUTDIR`); `long` and `effects` spell them in lower case. */
  ignoreCase?: boolean;
  /**
   * Environment variables the tool reads that change what it runs or writes (`PYTEST_ADDOPTS`):
   * setting one counts like setting a variable of DANGEROUS_VARIABLES (opaque in a script, refused
   * in a session's env). `*` stands for every variable (make takes each one as a make variable);
   * then an assignment before the command, or through `env`, is opaque. See MODEL_VARIABLES and
   * readsVariable in commands/model.ts.
   */
  environment?: string[];
  /** Every word is an operand for `operands` to judge (find's expression). */
  expression?: boolean;
  /** Options stop at the first operand (POSIX; env, xargs, git before its subcommand). */
  posix?: boolean;
  /** Short options whose value is only ever attached (`date -Iseconds`, gawk's `-d[file]`). */
  shortOptional?: string;
  /** A word `-N` (digits) is an option (`head -5`, `grep -3`), or a negative number (`seq -1 3`). */
  numeric?: boolean;
  /** Effects of every form (`pip install` reaches the network, writes and runs build code). */
  always?: Effect[];
  /** Options whose value is a file the form writes (`sort -o FILE`, `cp -t DIR`). */
  writeOptions?: string[];
  /**
   * Options with which the form reads files its arguments do not name, each with why: a list of
   * names in a file or on stdin (`sort --files0-from=-`, `tar -T list`, `sha256sum -c SUMS`), or
   * operands resolved in another directory (`tar -C DIR`). Such a form may read any path
   * (FormVerdict.readsAny), so a deny or ask path rule refuses it.
   */
  readsAny?: Record<string, string>;
  /**
   * Options whose value is a glob naming the files the command searches, ignore rules overridden
   * (`rg -g`), and those that make it case-insensitive (`rg --iglob`): FormVerdict.selects.
   */
  selectGlobs?: { options: string[]; caseless: string[] };
  /**
   * Operands the form writes: all of them (`rm`, `mv`, `tee`, `ln`), the last (`cp`, `install`),
   * the second (`uniq IN OUT`, `split IN PREFIX`), or those starting with a prefix, without it (`dd of=F`).
   */
  writeOperands?: "all" | "last" | "second" | { prefix: string };
}

/** What a form does: its effects, or why it is unknown. */
export interface FormVerdict {
  effects: Effect[];
  /** Set when the form cannot be judged (an unknown option, a word that is not literal). */
  unknown?: string;
  /** Options met (long names and letters), for operandEffect and callers. */
  options: string[];
  /** Files the form writes, as the words that name them (writeOptions, writeOperands). */
  writes: ArgWord[];
  /** Why the form may read any path (Grammar.readsAny), for the first such option met. */
  readsAny?: string;
  /**
   * The option values met (`date -f F`: the argv word F itself; an attached one as a literal word),
   * so an expanding value is judged as a path even where operands are not (bash/arguments.ts).
   */
  values?: ArgWord[];
  /** The globs of Grammar.selectGlobs options met, each with whether it ignores case. */
  selects?: { word: ArgWord; caseless: boolean }[];
}

/** Each grammar's long options: name → "=" (takes a value), "?" (attached only) or "". Built once. */
const longTables = new WeakMap<Grammar, Map<string, "=" | "?" | "">>();

function longTable(grammar: Grammar): Map<string, "=" | "?" | ""> {
  let table = longTables.get(grammar);
  if (!table) {
    table = new Map();
    for (const spec of grammar.long ?? []) {
      const kind = spec.endsWith("=") ? "=" : spec.endsWith("?") ? "?" : "";
      table.set(kind ? spec.slice(0, -1) : spec, kind);
    }
    longTables.set(grammar, table);
  }
  return table;
}

/** Resolves `name` among the long options as getopt_long does: exact, else a unique prefix. */
function resolveLong(name: string, grammar: Grammar): string | null | "ambiguous" {
  const table = longTable(grammar);
  if (table.has(name)) return name;
  let match: string | null = null;
  for (const n of table.keys()) {
    if (!n.startsWith(name)) continue;
    if (match !== null) return "ambiguous";
    match = n;
  }
  return match;
}

function takesValue(long: string, grammar: Grammar): "=" | "?" | "" {
  return longTable(grammar).get(long) ?? "";
}

/**
 * True for a word that is not literal but cannot begin with `-`, so no parser takes it for an
 * option: its glob (ArgWord.glob) starts with a literal character other than `-`
 * (`"src/$f"`, a process substitution's `/dev/fd/63`).
 */
function neverOption(word: ArgWord): boolean {
  const glob = word.glob;
  if (!glob) return false;
  const escaped = glob[0] === "\\";
  const first = escaped ? glob[1] : glob[0];
  if (first === undefined || first === "-") return false;
  return escaped || !/[*?[{~\u0001]/.test(first);
}

/** A literal word for a value written attached to its option (`-o.env`, `--output=x`). */
function attached(value: string): ArgWord {
  return { value, expands: false, raw: value };
}

/** The words a form writes: values of writeOptions and the operands writeOperands names. */
function writtenWords(grammar: Grammar, values: [string, ArgWord | null][], operands: ArgWord[]): ArgWord[] {
  const out: ArgWord[] = [];
  for (const [option, word] of values)
    if (grammar.writeOptions?.includes(option)) out.push(word ?? { value: null, expands: false, raw: "…" });
  const spec = grammar.writeOperands;
  if (spec === "all") out.push(...operands);
  // `cp -t DIR a b` names its target with -t: its operands are all sources.
  else if (spec === "last" && operands.length > 1 && out.length === 0) out.push(operands.at(-1) as ArgWord);
  else if (spec === "second" && operands[1]) out.push(operands[1]);
  else if (typeof spec === "object")
    for (const w of operands) {
      if (w.value === null) out.push(w);
      else if (w.value.startsWith(spec.prefix)) out.push({ ...w, value: w.value.slice(spec.prefix.length) });
    }
  return out.filter((w) => w.value !== "-");
}

/** FormVerdict.selects of a form with these option values and options (none: no field). */
function selected(grammar: Grammar, values: [string, ArgWord | null][], options: string[]) {
  const spec = grammar.selectGlobs;
  if (!spec) return {};
  const all = options.some((o) => spec.caseless.includes(o));
  const selects = values.flatMap(([option, word]) =>
    spec.options.includes(option) || spec.caseless.includes(option)
      ? [
          {
            word: word ?? { value: null, expands: false, raw: "…" },
            caseless: all || spec.caseless.includes(option),
          },
        ]
      : [],
  );
  return selects.length > 0 ? { selects } : {};
}

/**
 * Reads `argv` (command name first; for a subcommand, its name first) against `grammar`.
 * Pure; linear in argv.
 */
export function readForm(argv: readonly ArgWord[], grammar: Grammar): FormVerdict {
  const effects = new Set<Effect>(grammar.always);
  const options: string[] = [];
  const operands: ArgWord[] = [];
  const values: [string, ArgWord | null][] = [];
  const operandWrites: ArgWord[] = [];
  const verdict = (unknown?: string): FormVerdict => {
    // A permissive grammar keeps an abbreviation as written (`--files` for `--files-from`).
    const keys = Object.keys(grammar.readsAny ?? {});
    const key = (o: string) =>
      grammar.readsAny?.[o] !== undefined
        ? o
        : grammar.permissive && o.length > 1
          ? keys.find((k) => k.length > 1 && k.startsWith(o))
          : undefined;
    const any = options.map(key).find((k) => k !== undefined);
    return {
      effects: [...effects],
      options,
      writes: unknown ? [] : [...writtenWords(grammar, values, operands), ...operandWrites],
      values: values.flatMap(([, w]) => (w ? [w] : [])),
      ...selected(grammar, values, options),
      ...(unknown ? { unknown } : {}),
      ...(any !== undefined ? { readsAny: grammar.readsAny?.[any] as string } : {}),
    };
  };
  const effectOf = (option: string) => {
    const effect = grammar.effects?.[option];
    if (effect) effects.add(effect);
  };
  let i = grammar.expression ? argv.length : 1;
  if (grammar.expression) {
    for (const w of argv.slice(1)) {
      if (w.value === null) return verdict(`the word ${w.raw ?? "?"} is not literal and may be a primary`);
      operands.push(w);
    }
  }
  for (; i < argv.length; i++) {
    const word = argv[i] as ArgWord;
    const v = word.value;
    if (v === null || word.expands) {
      if (v !== null ? !v.startsWith("-") : neverOption(word)) {
        if (grammar.posix || grammar.sub) break;
        operands.push(word);
        continue;
      }
      if (grammar.effects || grammar.sub || grammar.operands || grammar.writeOptions)
        return verdict(`the word ${word.raw ?? "?"} is not literal and may be an option`);
      operands.push(word);
      continue;
    }
    if (v === "--") {
      i++;
      break;
    }
    if (grammar.numeric && /^-\d+$/.test(v)) continue;
    if (v.startsWith("--") || (grammar.singleDash && v.startsWith("-") && v.length > 1)) {
      const [written, ...rest] = v.replace(/^--?/, "").split("=");
      const name = grammar.ignoreCase ? (written as string).toLowerCase() : written;
      const resolved = resolveLong(name as string, grammar);
      if (resolved === "ambiguous" || resolved === null) {
        if (!grammar.permissive) return verdict(`${v.split("=")[0]} is not an option the model knows`);
        options.push(name as string);
        const effect = Object.keys(grammar.effects ?? {}).find(
          (e) => e.length > 1 && e.startsWith(name as string),
        );
        if (effect) effectOf(effect);
        continue;
      }
      options.push(resolved);
      effectOf(resolved);
      if (rest.length > 0) values.push([resolved, attached(rest.join("="))]);
      else if (takesValue(resolved, grammar) === "=") values.push([resolved, argv[++i] ?? null]);
      continue;
    }
    if (v.startsWith("-") && v !== "-") {
      for (let j = 1; j < v.length; j++) {
        const letter = v[j] as string;
        if (grammar.shortValue?.includes(letter) || grammar.shortOptional?.includes(letter)) {
          options.push(letter);
          effectOf(letter);
          const last = j === v.length - 1;
          if (!last) values.push([letter, attached(v.slice(j + 1))]);
          else if (grammar.shortValue?.includes(letter)) values.push([letter, argv[++i] ?? null]);
          break;
        }
        if (!grammar.short?.includes(letter) && !grammar.permissive && !grammar.effects?.[letter])
          return verdict(`-${letter} is not an option the model knows`);
        options.push(letter);
        effectOf(letter);
      }
      continue;
    }
    if (grammar.sub || grammar.posix) break;
    operands.push(word);
  }
  if (grammar.sub) {
    const name = argv[i]?.value;
    if (name === undefined) return verdict();
    if (name === null) return verdict("the subcommand is not literal");
    const sub = grammar.sub[name];
    if (!sub) return verdict(`the subcommand ${name} is not one the model knows`);
    const inner = readForm(argv.slice(i), sub);
    const outer = verdict().readsAny ?? inner.readsAny;
    return {
      effects: [...new Set([...effects, ...inner.effects])],
      options: [...options, ...inner.options],
      writes: [...writtenWords(grammar, values, []), ...inner.writes],
      values: [...values.flatMap(([, w]) => (w ? [w] : [])), ...(inner.values ?? [])],
      ...(inner.unknown ? { unknown: inner.unknown } : {}),
      ...(outer !== undefined ? { readsAny: outer } : {}),
    };
  }
  if (grammar.payload) return verdict();
  for (const w of argv.slice(i)) {
    if (w.value === null && grammar.operands) return verdict(`the word ${w.raw ?? "?"} is not literal`);
    operands.push(w);
  }
  if (
    grammar.operandEffect &&
    operands.length > 0 &&
    !grammar.operandEffect.unless.some((o) => options.includes(o))
  )
    effects.add(grammar.operandEffect.effect);
  const args: Parameters<NonNullable<Grammar["operands"]>> = [
    operands.map((w) => w.value ?? ""),
    options,
    values.map(([o, w]) => [o, w?.value ?? null]),
  ];
  const judged = grammar.operands?.(...args);
  if (judged?.startsWith("unknown: ")) return verdict(judged.slice(9));
  if (judged) effects.add(judged as Effect);
  for (const file of grammar.operandWrites?.(...args) ?? [])
    operandWrites.push(file === null ? { value: null, expands: false, raw: "…" } : attached(file));
  return verdict();
}

/** Splits a space-separated list of option names (kept as text so the model's data stays compact). */
export function words(text: string): string[] {
  return text.split(" ").filter((w) => w !== "");
}

/**
 * A GNU tool's grammar: short flags, short options taking a value, long options (space-separated,
 * see Grammar.long; `--help` and `--version` added), and any other Grammar fields.
 */
export function gnu(short: string, shortValue: string, long: string, rest: Partial<Grammar> = {}): Grammar {
  return { short, shortValue, long: words(`${long} help version`), ...rest };
}
