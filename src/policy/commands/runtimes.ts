/**
 * The command model's language runtimes and installers (commands/model.ts): python (CPython 3.12
 * options), node (Node 20), pip (pip 24, optparse: long options abbreviate), test runners, and
 * commands whose every form has an effect (privilege, network clients). A runtime runs code in
 * every form but `--version` / `--help` (and `node --check`): a script, `-c` / `-e` code, a module
 * (`-m`), or the program read from stdin when none is named.
 */
import { type Effect, type Grammar, gnu, words } from "./grammar.js";

/** `exec` unless every option met is one of `free` (version, help) and, unless `check` is met, no operand is. */
function runsCode(free: string[], check: string[] = []) {
  return (operands: string[], options: string[]): Effect | null => {
    if (options.length === 0 || !options.every((o) => free.includes(o) || check.includes(o))) return "exec";
    return operands.length === 0 || options.some((o) => check.includes(o)) ? null : "exec";
  };
}

const PYTHON: Grammar = {
  posix: true,
  short: "bBdEhiIOPqsSuvVx",
  shortValue: "cmWX",
  long: words("help help-env help-xoptions help-all version check-hash-based-pycs="),
  operands: runsCode(["V", "version", "h", "help", "help-env", "help-xoptions", "help-all"]),
};

/** Node's options are many; any but the free ones means code runs, so unknown ones are taken as flags. */
const NODE: Grammar = {
  permissive: true,
  posix: true,
  shortValue: "eprC",
  long: words(
    "version help v8-options check eval= print= require= import= loader= experimental-loader= env-file= input-type= conditions= title=",
  ),
  operands: runsCode(["v", "version", "h", "help", "v8-options"], ["c", "check"]),
};

/** pip's global options, before or after the subcommand (optparse merges them). */
const PIP_GLOBAL =
  "help isolated require-virtualenv python= verbose version quiet log= log-file= no-input " +
  "keyring-provider= proxy= retries= timeout= exists-action= trusted-host= cert= client-cert= " +
  "cache-dir= no-cache-dir disable-pip-version-check no-color no-python-version-warning " +
  "use-feature= use-deprecated= resume-retries= root-user-action=";
const PIP_GLOBAL_EFFECTS: Record<string, Effect> = { log: "write", "log-file": "write", python: "exec" };

/** A pip subcommand: its options are taken as flags; only the effect options and the global ones count. */
function pipSub(
  effects: Record<string, Effect> = {},
  always: Effect[] = [],
  sub?: Record<string, Grammar>,
): Grammar {
  return {
    permissive: true,
    effects: { ...PIP_GLOBAL_EFFECTS, ...effects },
    always,
    ...(sub ? { sub } : {}),
  };
}

/** install / download / wheel fetch packages and may build them (running their setup code). */
const FETCHES: Effect[] = ["network", "write", "exec"];

const PIP: Grammar = gnu("hvVq", "", PIP_GLOBAL, {
  effects: PIP_GLOBAL_EFFECTS,
  sub: {
    install: pipSub({}, FETCHES),
    download: pipSub({}, FETCHES),
    wheel: pipSub({}, FETCHES),
    uninstall: pipSub({}, ["write"]),
    list: pipSub({ o: "network", outdated: "network", u: "network", uptodate: "network" }),
    show: pipSub(),
    freeze: pipSub(),
    check: pipSub(),
    inspect: pipSub(),
    hash: pipSub(),
    debug: pipSub(),
    help: pipSub(),
    completion: pipSub(),
    search: pipSub({}, ["network"]),
    index: pipSub({}, ["network"]),
    cache: pipSub({}, [], {
      dir: pipSub(),
      info: pipSub(),
      list: pipSub(),
      remove: pipSub({}, ["write"]),
      purge: pipSub({}, ["write"]),
    }),
    config: pipSub({}, [], {
      list: pipSub(),
      get: pipSub(),
      debug: pipSub(),
      set: pipSub({}, ["write"]),
      unset: pipSub({}, ["write"]),
      edit: pipSub({}, ["exec"]),
    }),
  },
});

/**
 * pytest 8 (its `--help`, and _pytest/config/argparsing.py: argparse without abbreviations, `@FILE`
 * reads arguments from FILE). It runs the project's tests (that is what allowing it means); `-p`
 * loads a plugin, `-c` / `-o` / `--rootdir` / `--confcutdir` choose the configuration and conftest
 * files that name plugins and options, `--pdbcls` imports a module. `--basetemp DIR` empties DIR
 * (pytest deletes it first): a write effect, like rm. The report and log files it writes are paths
 * judged by path rules. PYTEST_ADDOPTS / PYTEST_PLUGINS add options and plugins from the
 * environment, PYTEST_DEBUG_TEMPROOT moves the temporary root (pytest's "Environment variables").
 */
const PYTEST: Grammar = {
  permissive: true,
  shortValue: "kmcopW",
  long: words("basetemp= junitxml= junit-xml= resultlog= result-log= log-file= debug? confcutdir= pdbcls="),
  effects: {
    p: "exec",
    c: "exec",
    o: "exec",
    "override-ini": "exec",
    "config-file": "exec",
    inifile: "exec",
    rootdir: "exec",
    confcutdir: "exec",
    pdbcls: "exec",
    pastebin: "network",
    basetemp: "write",
  },
  writeOptions: ["basetemp", "junitxml", "junit-xml", "resultlog", "result-log", "log-file", "debug"],
  operands: (operands) =>
    operands.some((o) => o.startsWith("@")) ? "unknown: pytest reads more arguments from an @FILE" : null,
  environment: ["PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG_TEMPROOT"],
};

/**
 * tsc 5 (TypeScript's commandLineParser.ts: one or two dashes, option names in any case, values
 * the next word). It writes its outputs where the project's tsconfig says: that is the build it is
 * allowed for. The options naming where it writes are paths judged by path rules, so `--outDir`
 * inside the workspace runs and `--outFile /tmp/x.js` meets the rules for /tmp.
 */
const TSC: Grammar = {
  permissive: true,
  singleDash: true,
  ignoreCase: true,
  long: words("outfile= out= outdir= declarationdir= tsbuildinfofile= generatetrace= project= build?"),
  writeOptions: ["outfile", "out", "outdir", "declarationdir", "tsbuildinfofile", "generatetrace"],
};

export const RUNTIMES: Record<string, Grammar> = {
  python: PYTHON,
  python3: PYTHON,
  node: NODE,
  pip: PIP,
  pip3: PIP,
  pytest: PYTEST,
  tsc: TSC,
  // Every form runs as another user, or reaches the network.
  sudo: { permissive: true, always: ["exec"] },
  doas: { permissive: true, always: ["exec"] },
  su: { permissive: true, always: ["exec"] },
  curl: {
    permissive: true,
    always: ["network"],
    effects: { o: "write", output: "write", O: "write", "remote-name": "write" },
  },
  wget: { permissive: true, always: ["network", "write"] },
  ssh: { permissive: true, always: ["network", "exec"] },
  scp: { permissive: true, always: ["network", "write"] },
  rsync: { permissive: true, always: ["write"], effects: { e: "exec", rsh: "exec", "rsync-path": "exec" } },
  nc: { permissive: true, always: ["network"] },
};
