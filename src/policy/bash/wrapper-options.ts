/**
 * How a wrapper's own options are read (bash/wrappers.ts), as the wrappers' getopt / getopt_long
 * read them: short clusters with a value attached or in the next word, long options with `=` or
 * the next word, and long-option abbreviations (`env --chd=DIR` is `env --chdir=DIR`; GNU
 * coreutils env(1), sudo(8) 1.9). Records the options met and their values, so a wrapper that
 * changes directory (`env -C`, `sudo -D`) says where its payload runs.
 */
import type { ArgWord } from "../command-pattern.js";

/** A word the script does not spell (a missing option value, an operand from input). */
export const UNKNOWN: ArgWord = { value: null, expands: false, raw: "…" };

/** A wrapper's option grammar. */
export interface OptionSpec {
  /** Short options that take a value (`-u NAME` or `-uNAME`). */
  short?: string;
  /** Long options that take a separate value when written without `=`. */
  long?: string[];
  /** Its other long options (flags), so an abbreviation resolves as getopt_long resolves it. */
  flags?: string[];
  /** A word like `-10` is an option (nice). */
  numeric?: boolean;
}

/**
 * The long option `name` as getopt_long reads it (GNU wrappers: env, sudo, timeout…): an exact
 * name, else the one option it is a unique prefix of (`--chd` is `--chdir`); "ambiguous" when it
 * abbreviates several, and `name` itself when it names none the spec lists.
 */
function longName(name: string, spec: OptionSpec): string {
  const all = [...(spec.long ?? []), ...(spec.flags ?? [])];
  if (all.includes(name) || name === "") return name;
  const matches = all.filter((n) => n.startsWith(name));
  return matches.length === 1 ? (matches[0] as string) : matches.length > 1 ? "ambiguous" : name;
}

/**
 * Index of the first non-option word at or after `start`, or a reason string when an option word is
 * not literal. `seen` collects the option letters / long names met (long names as getopt_long
 * resolves them, for wrappers whose flags matter); `values` the value word of each option taking
 * one (an attached value as a word of its own).
 */
export function skipOptions(
  args: ArgWord[],
  start: number,
  spec: OptionSpec,
  seen: string[] = [],
  values: Map<string, ArgWord> = new Map(),
): number | string {
  let i = start;
  while (i < args.length) {
    const word = args[i] as ArgWord;
    if (word.value === null) return "an option of the wrapper is not literal";
    const v = word.value;
    if (v === "--") return i + 1;
    if (!v.startsWith("-") || v === "-") return i;
    if (spec.numeric && /^-\d+$/.test(v)) {
      i++;
      continue;
    }
    if (v.startsWith("--")) {
      const written = v.slice(2).split("=")[0] as string;
      const name = longName(written, spec);
      if (name === "ambiguous") return `the option --${written} of the wrapper is ambiguous`;
      seen.push(name);
      const takes = spec.long?.includes(name);
      if (takes && v.includes("=")) values.set(name, literal(v.slice(v.indexOf("=") + 1), word));
      else if (takes) values.set(name, args[i + 1] ?? UNKNOWN);
      i += !v.includes("=") && takes ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let j = 1; j < v.length; j++) {
      const letter = v[j] as string;
      seen.push(letter);
      if (spec.short?.includes(letter)) {
        if (j === v.length - 1) {
          consumed = 2;
          values.set(letter, args[i + 1] ?? UNKNOWN);
        } else values.set(letter, literal(v.slice(j + 1), word));
        break;
      }
    }
    i += consumed;
  }
  return i;
}

/** An option's value written attached to it (`-C.git`, `--chdir=.git`), as a word of its own. */
function literal(value: string, of: ArgWord): ArgWord {
  return of.expands ? { ...of, value: null } : { value, expands: false, raw: value };
}

export const ENV_OPTIONS: OptionSpec = {
  short: "uCSa",
  long: ["unset", "chdir", "split-string", "argv0"],
  flags: [
    "ignore-environment",
    "null",
    "block-signal",
    "default-signal",
    "ignore-signal",
    "list-signal-handling",
    "debug",
    "help",
    "version",
  ],
};
export const SUDO_OPTIONS: OptionSpec = {
  short: "ugChpRrtTUDa",
  long: [
    "user",
    "group",
    "chdir",
    "close-from",
    "host",
    "prompt",
    "chroot",
    "role",
    "type",
    "other-user",
    "command-timeout",
    "auth-type",
  ],
  flags: [
    "askpass",
    "background",
    "bell",
    "edit",
    "help",
    "login",
    "list",
    "non-interactive",
    "preserve-env",
    "preserve-groups",
    "remove-timestamp",
    "reset-timestamp",
    "set-home",
    "shell",
    "stdin",
    "validate",
    "version",
  ],
};
