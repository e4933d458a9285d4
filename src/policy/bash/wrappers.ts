/**
 * Commands that run another command whose argv is visible: env, command, builtin, exec, nice,
 * nohup, setsid, timeout, time, stdbuf, ionice, xargs, sudo, doas, busybox, `find -exec`, and shells
 * with `-c` and a literal script (`find -delete` counts as `rm`), and commands that run others
 * through an option (`fd -x`, `rg --pre`, `git grep -O`). Each is unwrapped so the payload is
 * checked like any command (opencode#16075, qwen-code#10192: payloads of wrappers were never checked). Commands that run code
 * we cannot see (eval, source, a shell reading stdin or a script file, a non-literal `-c`) are opaque.
 */

import type { ArgWord } from "../command-pattern.js";
import type { OptionSpec } from "./wrapper-options.js";
import { ENV_OPTIONS, SUDO_OPTIONS, skipOptions, UNKNOWN } from "./wrapper-options.js";

/** What a command turned out to be, once its wrapper options are read. */
export interface Unwrapped {
  /** `command`: judged as a normal command; `wrapper`: only deny / ask rules apply to it. */
  role: "command" | "wrapper";
  /** Commands it runs, each an argv. */
  payloads: ArgWord[][];
  /** Literal shell scripts it runs (`bash -c '...'`, `eval 'literal'`), parsed again. */
  scripts: string[];
  /** Set when part of what it runs cannot be seen; the reason. */
  opaque?: string;
  /** Environment variables it sets for the payload (`env A=1 cmd`). */
  assigned: string[];
  /** Files it writes, from its own options (`time -o FILE`, `find -fprint FILE`). */
  writes: ArgWord[];
  /**
   * The directory its payloads and scripts run in, when it changes directory for them (`env -C
   * DIR`, `env --chdir=DIR`, `sudo -D DIR`): the word as written, relative to the wrapper's own
   * working directory (bash/parts.ts inDirectory judges the payload's parts there).
   */
  chdir?: ArgWord;
}

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "rbash"]);
const OPAQUE_BUILTINS: Record<string, string> = {
  eval: "eval runs a string as shell code",
  source: "source runs a script file",
  ".": "`.` runs a script file",
};
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/s;

function base(word: ArgWord | undefined): string | null {
  if (!word || word.value === null) return null;
  const i = word.value.lastIndexOf("/");
  return i === -1 ? word.value : word.value.slice(i + 1);
}

/** `result` with the directory option `short` / `long` gave (the last one wins), if any. */
function withChdir(result: Unwrapped, values: Map<string, ArgWord>, short: string, long: string): Unwrapped {
  if (result.opaque) return result;
  const dirs = [...values.entries()].filter(([k]) => k === short || k === long);
  const dir = dirs.at(-1)?.[1];
  return dir ? { ...result, chdir: dir } : result;
}

function plain(role: Unwrapped["role"]): Unwrapped {
  return { role, payloads: [], scripts: [], assigned: [], writes: [] };
}

function opaque(why: string): Unwrapped {
  return { ...plain("wrapper"), opaque: why };
}

/** A wrapper whose payload starts after its options (and, for env / sudo, NAME=value words). */
function simpleWrapper(
  argv: ArgWord[],
  spec: OptionSpec,
  opts: { assignments?: boolean; skip?: number } = {},
) {
  const seen: string[] = [];
  const values = new Map<string, ArgWord>();
  const at = skipOptions(argv, 1, spec, seen, values);
  if (typeof at === "string") return { result: opaque(at), seen, values };
  const result = plain("wrapper");
  let i = at + (opts.skip ?? 0);
  while (opts.assignments && i < argv.length && ASSIGNMENT.test(argv[i]?.value ?? "")) {
    result.assigned.push((argv[i]?.value ?? "").split("=")[0] as string);
    i++;
  }
  if (argv.slice(at, at + (opts.skip ?? 0)).some((w) => w.value === null)) {
    return { result: opaque("an argument of the wrapper is not literal"), seen, values };
  }
  if (i < argv.length) result.payloads.push(argv.slice(i));
  return { result, seen, values };
}

function unwrapShell(argv: ArgWord[], name: string): Unwrapped {
  let command = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const v = argv[i]?.value;
    if (v === null || v === undefined) {
      if (command) break;
      return opaque(`an option of ${name} is not literal`);
    }
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (v === "-o" || v === "+o" || v === "--rcfile" || v === "--init-file") {
      i++;
      continue;
    }
    if (v.startsWith("--")) continue;
    if (/^[-+][A-Za-z]+$/.test(v)) {
      if (v.startsWith("-") && v.includes("c")) command = true;
      continue;
    }
    break;
  }
  const first = argv[i];
  if (!command) {
    return opaque(
      first ? `${name} runs the script file ${first.raw ?? "?"}` : `${name} reads commands from stdin`,
    );
  }
  if (!first || first.value === null) return opaque(`${name} -c with a script that is not a literal string`);
  return { ...plain("wrapper"), scripts: [first.value] };
}

/** GNU findutils xargs(1): `--arg-file F` takes its value from the next word too. */
const XARGS_OPTIONS = {
  short: "ILnPsdaE",
  long: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
  flags: ["null", "eof", "replace", "max-lines", "interactive", "no-run-if-empty", "verbose", "exit"],
};

function unwrapXargs(argv: ArgWord[]): Unwrapped {
  const seen: string[] = [];
  const at = skipOptions(argv, 1, XARGS_OPTIONS, seen);
  if (typeof at === "string") return opaque(at);
  const replace = argv
    .slice(1, at)
    .find((w, k, all) => w.value?.startsWith("-I") || all[k - 1]?.value === "-I");
  let payload = at < argv.length ? argv.slice(at) : [{ value: "echo", expands: false, raw: "echo" }];
  if (replace || seen.includes("i") || seen.includes("replace")) {
    payload = payload.map((w, k) => (k === 0 ? w : UNKNOWN));
  } else payload = [...payload, UNKNOWN];
  return { ...plain("wrapper"), payloads: [payload] };
}

function unwrapFind(argv: ArgWord[]): Unwrapped {
  const result = plain("command");
  for (let i = 1; i < argv.length; i++) {
    const v = argv[i]?.value;
    if (v === "-fprint" || v === "-fprint0" || v === "-fprintf" || v === "-fls") {
      result.writes.push(argv[i + 1] ?? UNKNOWN);
      continue;
    }
    if (v === "-delete") {
      // find -delete removes what it matched: judged as the rm it amounts to.
      result.payloads.push([{ value: "rm", expands: false, raw: "-delete" }, UNKNOWN]);
      continue;
    }
    if (v !== "-exec" && v !== "-execdir" && v !== "-ok" && v !== "-okdir") continue;
    const end = argv.findIndex((w, k) => k > i && (w.value === ";" || w.value === "+"));
    if (end === -1) return { ...result, opaque: `find ${v} without a terminating ';' or '+'` };
    result.payloads.push(argv.slice(i + 1, end).map((w) => (w.value?.includes("{}") ? UNKNOWN : w)));
    i = end;
  }
  return result;
}

/** `fd -x/--exec CMD…` and `-X/--exec-batch CMD…` run CMD for each result (up to a lone `;`). */
function unwrapFd(argv: ArgWord[]): Unwrapped {
  const result = plain("command");
  const at = argv.findIndex(
    (w, k) => k > 0 && ["-x", "--exec", "-X", "--exec-batch"].includes(w.value ?? ""),
  );
  if (at === -1) return result;
  const end = argv.findIndex((w, k) => k > at && w.value === ";");
  const payload = argv.slice(at + 1, end === -1 ? argv.length : end);
  if (payload.length === 0) return { ...result, opaque: "fd --exec without a command" };
  result.payloads.push([...payload.map((w) => (w.value?.includes("{") ? UNKNOWN : w)), UNKNOWN]);
  return result;
}

/** `rg --pre CMD` runs CMD on every file searched. */
function unwrapRipgrep(argv: ArgWord[]): Unwrapped {
  const result = plain("command");
  for (let i = 1; i < argv.length; i++) {
    const v = argv[i]?.value ?? null;
    if (v === null) continue;
    const pre =
      v === "--pre" ? argv[i + 1] : v.startsWith("--pre=") ? { ...argv[i], value: v.slice(6) } : null;
    if (pre) result.payloads.push([pre as ArgWord, UNKNOWN]);
  }
  return result;
}

/** `git grep -O[CMD]` / `--open-files-in-pager` runs a command of git's choosing. */
function unwrapGit(argv: ArgWord[]): Unwrapped {
  const runsPager = argv.some(
    (w, k) => k > 1 && (w.value === null || /^(-O|--open-files-in-pager)/.test(w.value)),
  );
  return argv.some((w) => w.value === "grep") && runsPager
    ? { ...plain("command"), opaque: "git grep -O runs a pager command on the files" }
    : plain("command");
}

/** Reads `argv` as a wrapper (see module doc); `role: "command"` with no payloads when it is not one. */
export function unwrap(argv: ArgWord[]): Unwrapped {
  const name = base(argv[0]);
  if (name === null) return opaque("the command name is not literal");
  if (name in OPAQUE_BUILTINS) {
    const result = opaque(OPAQUE_BUILTINS[name] as string);
    const rest = argv.slice(1);
    if (name === "eval" && rest.length > 0 && rest.every((w) => w.value !== null)) {
      result.scripts.push(rest.map((w) => w.value).join(" "));
    }
    return result;
  }
  if (SHELLS.has(name)) return unwrapShell(argv, name);
  switch (name) {
    case "env": {
      // GNU coreutils 9 env(1): -C/--chdir runs the payload in another directory.
      const { result, seen, values } = simpleWrapper(argv, ENV_OPTIONS, { assignments: true });
      if (seen.includes("S") || seen.includes("split-string"))
        return opaque("env -S splits a string into a command");
      return withChdir(result, values, "C", "chdir");
    }
    case "sudo":
    case "doas": {
      // sudo(8) 1.9: -D/--chdir runs the command in another directory.
      const { result, seen, values } = simpleWrapper(argv, SUDO_OPTIONS, { assignments: true });
      if (seen.includes("e") || seen.includes("edit"))
        return opaque(`${name} -e edits files as another user`);
      if (
        (seen.includes("s") || seen.includes("i") || seen.includes("shell")) &&
        result.payloads.length === 0
      ) {
        return opaque(`${name} opens an interactive shell`);
      }
      if (seen.includes("s") || seen.includes("i")) {
        return opaque(`${name} -s/-i runs the command through a shell`);
      }
      // Not transparent: running as another user must itself be allowed, besides its payload.
      return { ...withChdir(result, values, "D", "chdir"), role: "command" };
    }
    case "command": {
      const { result, seen } = simpleWrapper(argv, {});
      // `command -v NAME` / `-V` only look a name up; nothing runs.
      return seen.includes("v") || seen.includes("V") ? plain("command") : result;
    }
    case "builtin":
    case "nohup":
    case "setsid":
      return simpleWrapper(argv, {}).result;
    case "exec":
      return simpleWrapper(argv, { short: "a" }).result;
    case "nice":
      return simpleWrapper(argv, { short: "n", long: ["adjustment"], numeric: true }).result;
    case "stdbuf":
      return simpleWrapper(argv, { short: "ioe", long: ["input", "output", "error"] }).result;
    case "ionice":
      return simpleWrapper(argv, { short: "cnpPu", long: ["class", "classdata"] }).result;
    case "timeout":
      return simpleWrapper(argv, { short: "sk", long: ["signal", "kill-after"] }, { skip: 1 }).result;
    case "time": {
      const { result } = simpleWrapper(argv, { short: "of", long: ["output", "format"] });
      const o = argv.findIndex((w) => w.value === "-o" || w.value === "--output");
      if (o > 0) result.writes.push(argv[o + 1] ?? UNKNOWN);
      return result;
    }
    case "trap": {
      // `trap ACTION SIGNAL…` runs ACTION later as shell code.
      const args = argv.slice(1).filter((w) => !["-p", "-l", "-P", "--"].includes(w.value ?? ""));
      const action = args[0];
      if (!action || args.length < 2 || action.value === "-") return plain("command");
      if (action.value === null) return opaque("trap with an action that is not a literal string");
      return { ...plain("wrapper"), scripts: [action.value] };
    }
    case "busybox":
      return argv.length > 1 ? { ...plain("wrapper"), payloads: [argv.slice(1)] } : plain("command");
    case "xargs":
      return unwrapXargs(argv);
    case "find":
      return unwrapFind(argv);
    case "fd":
    case "fdfind":
      return unwrapFd(argv);
    case "rg":
      return unwrapRipgrep(argv);
    case "git":
      return unwrapGit(argv);
    default:
      return plain("command");
  }
}
