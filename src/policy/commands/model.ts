/**
 * The command model as data (issue 13, item 1): for the commands the shipped policies name and
 * those agents use most, the option grammar (commands/grammar.ts) and which options or operands
 * write files, run other programs or reach the network. Grammars follow each tool's manual
 * (GNU coreutils / findutils / sed / tar / make, ripgrep 14, fd 10, git 2.4x, npm 10, go 1.2x,
 * cargo 1.8x); the coreutils, text tools and runtimes are in the other files of this folder. A command not
 * in the model is judged by its name alone, and policy files may name it in an allow rule only
 * with every effect accepted (policy-lint.ts).
 */

import type { ArgWord } from "../command-pattern.js";
import { BUILD_TOOLS } from "./build.js";
import { COREUTILS } from "./coreutils.js";
import { type Effect, type FormVerdict, type Grammar, readForm, words } from "./grammar.js";
import { RUNTIMES } from "./runtimes.js";
import { SED } from "./sed.js";
import { TEXT_TOOLS } from "./text.js";

export { sedScriptEffect } from "./sed.js";

const FIND_PRIMARIES = new Set(
  (
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin -atime -amin " +
    "-ctime -cmin -newer -anewer -cnewer -newermt -user -group -uid -gid -perm -links -inum -samefile -empty " +
    "-readable -writable -executable -maxdepth -mindepth -depth -mount -xdev -follow -noleaf -prune -quit -true " +
    "-false -not -a -and -o -or -print -print0 -printf -ls -lname -ilname -fstype -nouser -nogroup -used " +
    "-regextype -daystart -ignore_readdir_race -noignore_readdir_race -warn -nowarn -help -version ! ( ) ,"
  ).split(" "),
);
/** find's primaries that take one value (`-mmin -60`: the value may look like an option). */
const FIND_VALUED = new Set(
  (
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin -atime " +
    "-amin -ctime -cmin -newer -anewer -cnewer -newermt -user -group -uid -gid -perm -links -inum -samefile " +
    "-maxdepth -mindepth -lname -ilname -fstype -used -regextype -printf"
  ).split(" "),
);
const FIND_EFFECTS: Record<string, Effect> = {
  "-exec": "exec",
  "-execdir": "exec",
  "-ok": "exec",
  "-okdir": "exec",
  "-delete": "write",
  "-fprint": "write",
  "-fprint0": "write",
  "-fprintf": "write",
  "-fls": "write",
};

/** find's expression: known primaries only; -exec, -delete and -fprint* have effects. */
function findExpression(words: string[]): Effect | `unknown: ${string}` | null {
  let effect: Effect | null = null;
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as string;
    if (FIND_VALUED.has(w)) {
      k++;
      continue;
    }
    if (w === "-exec" || w === "-ok" || w === "-execdir" || w === "-okdir") {
      // The command up to `;` or `+` is the payload (bash/wrappers.ts), not primaries.
      while (k + 1 < words.length && words[k + 1] !== ";" && words[k + 1] !== "+") k++;
      k++;
      if (FIND_EFFECTS[w]) effect = "exec";
      continue;
    }
    const e = FIND_EFFECTS[w];
    if (e) effect = effect === "exec" ? effect : e;
    else if (w.startsWith("-") && w.length > 1 && !FIND_PRIMARIES.has(w) && !/^-[HLP]$|^-[DO]/.test(w))
      return `unknown: find ${w} is not a primary the model knows`;
  }
  return effect;
}

const GIT_DIFF_FAMILY: Grammar = {
  permissive: true,
  shortValue: "OSGUl",
  effects: { output: "write", "ext-diff": "exec", textconv: "exec" },
};
const GIT_BRANCH: Grammar = {
  short: "dDmMcCfrlvqiatu",
  long: words(
    "delete move copy force remotes all list verbose quiet abbrev? no-abbrev column? " +
      "no-column sort= merged? no-merged? contains? no-contains? points-at= format= color? " +
      "no-color ignore-case omit-empty show-current track? no-track set-upstream-to= " +
      "unset-upstream edit-description create-reflog recurse-submodules",
  ),
  effects: {
    d: "write",
    D: "write",
    m: "write",
    M: "write",
    c: "write",
    C: "write",
    f: "write",
    t: "write",
    u: "write",
    delete: "write",
    move: "write",
    copy: "write",
    force: "write",
    track: "write",
    "set-upstream-to": "write",
    "unset-upstream": "write",
    "edit-description": "exec",
    "create-reflog": "write",
  },
  operandEffect: {
    effect: "write",
    unless: [
      "l",
      "list",
      "a",
      "all",
      "r",
      "remotes",
      "contains",
      "merged",
      "no-merged",
      "no-contains",
      "points-at",
      "show-current",
    ],
  },
};
const GIT_READ: Grammar = {
  permissive: true,
  effects: { output: "write", "open-files-in-pager": "exec", O: "exec", "ext-diff": "exec" },
};

const GIT: Grammar = {
  posix: true,
  short: "pPhv",
  shortValue: "Cc",
  long: words(
    "version help paginate no-pager no-replace-objects no-lazy-fetch no-optional-locks " +
      "no-advice bare literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs " +
      "git-dir= work-tree= namespace= exec-path? config-env= super-prefix= list-cmds= html-path " +
      "man-path info-path attr-source=",
  ),
  // -c / --config-env set any config (core.pager, diff.external): a program of the caller's choosing.
  effects: { c: "exec", "config-env": "exec", "exec-path": "exec", "git-dir": "exec", "work-tree": "exec" },
  sub: {
    status: { permissive: true },
    diff: GIT_DIFF_FAMILY,
    log: GIT_DIFF_FAMILY,
    show: GIT_DIFF_FAMILY,
    blame: { permissive: true, effects: { contents: "write" } },
    "rev-parse": { permissive: true },
    "ls-files": { permissive: true },
    grep: GIT_READ,
    branch: GIT_BRANCH,
    // Read-only inspection.
    ...Object.fromEntries(
      ["shortlog", "describe", "rev-list", "merge-base", "for-each-ref"].map((n) => [
        n,
        { permissive: true },
      ]),
    ),
    // The object names these read are judged as paths by commands/git-revisions.ts; cat-file's --textconv /
    // --filters run the drivers git's attributes name.
    "cat-file": { permissive: true, effects: { textconv: "exec", filters: "exec" } },
    "ls-tree": { permissive: true },
    archive: {
      permissive: true,
      shortValue: "o",
      effects: { o: "write", output: "write", remote: "network", exec: "exec" },
      writeOptions: ["o", "output"],
    },
  },
};

const NPM_SCRIPT_EFFECTS: Record<string, Effect> = {
  "script-shell": "exec",
  "node-options": "exec",
  call: "exec",
  c: "exec",
  prefix: "write",
  userconfig: "exec",
  globalconfig: "exec",
};

/** The model: command name → grammar. */
export const COMMAND_MODEL: Record<string, Grammar> = {
  ...COREUTILS,
  ...TEXT_TOOLS,
  ...RUNTIMES,
  ...BUILD_TOOLS,
  sed: SED,
  find: { operands: findExpression, expression: true },
  fd: {
    short: "HIusigFalLp01qhVX",
    shortValue: "dtEeSco jx".replace(" ", ""),
    long: words(
      "hidden no-hidden no-ignore no-ignore-vcs no-ignore-parent unrestricted case-sensitive " +
        "ignore-case glob regex fixed-strings and= absolute-path relative-path list-details " +
        "follow full-path print0 max-depth= min-depth= exact-depth= exclude= prune type= " +
        "extension= size= changed-within= changed-before= owner= format= exec= exec-batch= " +
        "batch-size= ignore-file= color= hyperlink? threads= max-results= quiet show-errors " +
        "base-directory= path-separator= search-path= strip-cwd-prefix? one-file-system help " +
        "version",
    ),
    effects: { x: "exec", X: "exec", exec: "exec", "exec-batch": "exec" },
  },
  rg: {
    short: "abcFhHiIlLnNopqsSuUvVwxz0",
    shortValue: "ABCdeEfgjmMrtT",
    long: words(
      "after-context= before-context= context= binary byte-offset case-sensitive color= colors= " +
        "column context-separator= count count-matches crlf debug dfa-size-limit= encoding= " +
        "engine= regexp= file= files files-with-matches files-without-match fixed-strings follow " +
        "glob= glob-case-insensitive heading no-heading hidden no-hidden iglob= ignore-case " +
        "ignore-file= invert-match json line-buffered line-number no-line-number line-regexp " +
        "max-columns= max-columns-preview max-count= max-depth= max-filesize= mmap multiline " +
        "multiline-dotall no-config no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent " +
        "no-messages null null-data one-file-system only-matching passthru path-separator= pcre2 " +
        "pre= pre-glob= pretty quiet regex-size-limit= replace= search-zip smart-case sort= " +
        "sortr= stats text threads= trim type= type-not= type-add= type-list unrestricted vimgrep " +
        "with-filename no-filename word-regexp help version hostname-bin= hyperlink-format= " +
        "field-match-separator= field-context-separator= no-unicode no-require-git include-zero " +
        "max-depth=",
    ),
    effects: { pre: "exec", "hostname-bin": "exec" },
    // A glob overrides .gitignore and the hidden-file rule (`-g '**'` searches .git and .env).
    selectGlobs: { options: ["g", "glob", "iglob"], caseless: ["iglob", "glob-case-insensitive"] },
  },
  env: {
    posix: true,
    payload: true,
    short: "i0v",
    shortValue: "uCS",
    long: words(
      "ignore-environment null unset= chdir= split-string= block-signal? default-signal? " +
        "ignore-signal? list-signal-handling debug help version",
    ),
    effects: { S: "exec", "split-string": "exec" },
  },
  xargs: {
    posix: true,
    payload: true,
    short: "0rtpxo",
    shortValue: "aEILnPsd",
    long: words(
      "null arg-file= delimiter= eof? replace? max-lines? max-args= max-procs= max-chars= " +
        "interactive no-run-if-empty verbose exit open-tty show-limits help version " +
        "process-slot-var=",
    ),
    effects: { "process-slot-var": "exec" },
  },
  sort: {
    short: "bdfgiMhnRrVcCmsuz",
    shortValue: "kStTo",
    long: words(
      "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort " +
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort random-source= " +
        "reverse sort= version-sort batch-size= check? compress-program= debug files0-from= key= " +
        "merge output= stable buffer-size= field-separator= temporary-directory= parallel= unique " +
        "zero-terminated help version",
    ),
    effects: { o: "write", output: "write", "compress-program": "exec" },
    writeOptions: ["o", "output"],
    readsAny: { "files0-from": "it reads the files a list names (--files0-from)" },
  },
  // -R with -H runs tree again in every directory with `-o 00Tree.html` (tree(1)): it writes there.
  tree: { permissive: true, shortValue: "oLIPH", effects: { o: "write", R: "write" }, writeOptions: ["o"] },
  tar: {
    permissive: true,
    shortValue: "fCIT",
    readsAny: {
      T: "it reads the files a list names (-T)",
      "files-from": "it reads the files a list names (--files-from)",
      C: "it reads its operands in another directory (-C)",
      directory: "it reads its operands in another directory (--directory)",
    },
    effects: {
      "to-command": "exec",
      "use-compress-program": "exec",
      I: "exec",
      "info-script": "exec",
      "new-volume-script": "exec",
      checkpoint: "exec",
      "checkpoint-action": "exec",
      x: "write",
      extract: "write",
      c: "write",
      create: "write",
      r: "write",
      u: "write",
      append: "write",
      update: "write",
      delete: "write",
    },
  },
  git: GIT,
  go: {
    sub: Object.fromEntries(
      ["build", "test", "vet", "run", "install"].map((name) => [
        name,
        {
          permissive: true,
          singleDash: true,
          effects: {
            exec: "exec",
            toolexec: "exec",
            vettool: "exec",
            overlay: "exec",
            o: "write",
            modfile: "exec",
            pgo: "exec",
            ldflags: "exec",
            gcflags: "exec",
            asmflags: "exec",
          },
        } satisfies Grammar,
      ]),
    ),
  },
  cargo: {
    permissive: true,
    effects: {
      config: "exec",
      Z: "exec",
      "manifest-path": "exec",
      "target-dir": "write",
      "out-dir": "write",
      "artifact-dir": "write",
    },
  },
  npm: { permissive: true, effects: NPM_SCRIPT_EFFECTS },
  npx: { permissive: true, posix: true, effects: { ...NPM_SCRIPT_EFFECTS, package: "exec", p: "exec" } },
  pnpm: { permissive: true, effects: NPM_SCRIPT_EFFECTS },
  yarn: { permissive: true, effects: NPM_SCRIPT_EFFECTS },
};

/** Every grammar of `grammar`'s tree (its subcommands', at any depth). */
function grammars(grammar: Grammar): Grammar[] {
  return [grammar, ...Object.values(grammar.sub ?? {}).flatMap(grammars)];
}

/**
 * The environment variables the model's commands read that change what they run or write
 * (Grammar.environment: `PYTEST_ADDOPTS`, `MFLAGS`…). Built once.
 */
export const MODEL_VARIABLES: ReadonlySet<string> = new Set(
  Object.values(COMMAND_MODEL)
    .flatMap(grammars)
    .flatMap((g) => (g.environment ?? []).filter((v) => v !== "*")),
);

/**
 * Why the variables `assigned` before `argv` (a prefix, or `env`'s) change what it runs, or null:
 * one its command takes from the environment (Grammar.environment, by basename; `*`: every
 * variable, as make takes each as a make variable). Pure.
 */
export function environmentHazard(argv: readonly ArgWord[], assigned: readonly string[]): string | null {
  const name = argv[0]?.value ?? "";
  const label = name.slice(name.lastIndexOf("/") + 1);
  const environment = COMMAND_MODEL[label]?.environment ?? [];
  const taken = assigned.find((v) => environment.includes("*") || environment.includes(v));
  return taken === undefined
    ? null
    : `${label} takes ${taken} from the environment as one of its own variables, which may change what it runs`;
}

/**
 * What `argv`'s form does under the model, or null for a command the model does not describe.
 * `argv[0]` is matched by basename.
 */
export function judgeForm(argv: readonly ArgWord[]): FormVerdict | null {
  const name = argv[0]?.value;
  if (!name) return null;
  const grammar = COMMAND_MODEL[name.slice(name.lastIndexOf("/") + 1)];
  return grammar ? readForm(argv, grammar) : null;
}
