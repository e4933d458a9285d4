/**
 * git runs programs its configuration names (issue 13, item 4): a read-only `git status` or
 * `git diff` runs core.fsmonitor, diff.external, core.pager, textconv and filter drivers, `!`
 * aliases and hooks. The policy runs on the controller and the command in the sandbox, so rather
 * than rewriting the command, a git command a policy would allow becomes `ask` when the repository
 * it runs in (its `.git` directory, or the one a `.git` file points to) or the sandbox user's
 * global config sets a program-valued key, includes another file, or holds a hook git may run on a
 * read. Keys from git-config(1), githooks(5) and gitattributes(5). The reason names every such key
 * with its value, and a hook with its text: "allow for this session" is scoped to the reason, so it
 * covers exactly what the approver saw, and a changed value asks again (finding F6).
 *
 * It reads what git reads (attack-37 F1): config text with git's own syntax (commands/git-config-syntax.ts,
 * git-config(1)); the files of gitrepository-layout(5) that hold or redirect configuration
 * (config, config.worktree, `commondir`, a `.git` file's `gitdir:`), a bare repository git finds
 * by itself, each submodule's repository (git status and diff run git in it), the directory git
 * runs in (`git -C`, `--git-dir`, `env -C`); what it cannot read whole or as git does asks.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { type ConfigEntry, parseGitConfig } from "./git-config-syntax.js";

/** Reads a small text file in the sandbox; null when it is absent or not a regular file. */
export type ReadText = (path: string) => Promise<string | null>;

/** Program-valued keys, lowercased `section.key` or `section.*.key` (any subsection). */
const PROGRAM_KEYS = new Set([
  "core.fsmonitor",
  "core.pager",
  "core.editor",
  "core.sshcommand",
  "core.askpass",
  "core.gitproxy",
  "core.hookspath",
  "diff.external",
  "diff.*.textconv",
  "diff.*.command",
  "filter.*.clean",
  "filter.*.smudge",
  "filter.*.process",
  "merge.*.driver",
  "interactive.difffilter",
  "sequence.editor",
  "credential.helper",
  "credential.*.helper",
  "gpg.program",
  "gpg.*.program",
  "uploadpack.packobjectshook",
  "remote.*.uploadpack",
  "remote.*.receivepack",
  "include.path",
  "includeif.*.path",
  // `git log --help` (an allowed command's option) runs git help, which runs these (git-help(1)).
  "man.*.cmd",
  "man.*.path",
  "browser.*.cmd",
  "browser.*.path",
]);

/** Hooks git may run during a read-only command (post-index-change on an index refresh). */
const READ_HOOKS = ["post-index-change", "reference-transaction", "fsmonitor-watchman", "pre-auto-gc"];

/** Longest value or hook text shown whole in a reason; a longer one is cut and named by its digest. */
const MAX_SHOWN_CHARS = 400;

/**
 * `text` as a reason shows it: whole up to MAX_SHOWN_CHARS, else its start and the sha256 of all of
 * it, so the reason (and the session scope made from it) still changes with any change. Pure.
 */
function shownValue(text: string): string {
  if (text.length <= MAX_SHOWN_CHARS) return text;
  const digest = createHash("sha256").update(text).digest("hex");
  return `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length} characters, sha256 ${digest})`;
}

/** Global config files of the sandbox user (images/sandbox: HOME=/home/sandbox). */
const GLOBAL_CONFIGS = ["/etc/gitconfig", "/home/sandbox/.gitconfig", "/home/sandbox/.config/git/config"];

/** git's own limit on nested includes (MAX_INCLUDE_DEPTH in git's config.c). */
const MAX_INCLUDE_DEPTH = 10;

/** How deep submodules of submodules are followed; a deeper one asks. */
const MAX_SUBMODULE_DEPTH = 4;

/**
 * Longest config or hook file read whole, in bytes. A ReadText reads at most one byte more, so
 * that a longer file shows as longer: git reads all of it, so one not read whole asks.
 */
export const MAX_GIT_FILE_BYTES = 256 * 1024;

/** The entries of `config` that name a program (see programSettings), each as it is shown. */
function programEntries(config: string): { shown: string; entry: ConfigEntry }[] {
  const found: { shown: string; entry: ConfigEntry }[] = [];
  for (const entry of parseGitConfig(config).entries) {
    const { section, subsection, key } = entry;
    const value = entry.value ?? "true";
    const boolean = /^(true|false|yes|no|on|off|0|1)?$/i.test(value.trim());
    const name = subsection !== null ? `${section}.*.${key}` : `${section}.${key}`;
    if (
      (PROGRAM_KEYS.has(name) && !(name === "core.fsmonitor" && boolean)) ||
      (section === "alias" && value.startsWith("!")) ||
      (section === "pager" && !boolean)
    ) {
      const shown = entry.written === null ? "" : ` = ${shownValue(entry.written)}`;
      found.push({ shown: `${section}.${key}${shown}`, entry });
    }
  }
  return found;
}

/**
 * The program-valued settings of a git config text, each `section.key = value` as written (a
 * value continued with a trailing backslash includes its next lines; a key without `=` is shown
 * alone), read with git's syntax (commands/git-config-syntax.ts: a key on its header's line counts).
 * Pure. `[alias]` entries count when their value starts with `!`; `core.fsmonitor` unless a
 * boolean; every `pager.*` entry that is not a boolean. Entries after a line git refuses are
 * not listed (gitConfigHazard asks for that config as a whole).
 */
export function programSettings(config: string): string[] {
  return programEntries(config).map((e) => e.shown);
}

/**
 * The files the `include.path` and `includeIf.*.path` entries of `config` (the text of `file`) name,
 * resolved as git does (git-config(1) "Includes"): `~/` from the sandbox user's home, a relative
 * path from the config's folder. Every condition counts as met (reading one file too many only
 * asks more). Pure.
 */
export function includedFiles(config: string, file: string): string[] {
  const files: string[] = [];
  for (const { entry } of programEntries(config)) {
    if (entry.key !== "path" || entry.value === null || entry.value === "") continue;
    const value = entry.value;
    files.push(
      value.startsWith("~/")
        ? posix.join("/home/sandbox", value.slice(2))
        : posix.resolve(posix.dirname(file), value),
    );
  }
  return files;
}

/**
 * The `path` of every `[submodule "name"]` of a `.gitmodules` text, with its name (gitmodules(5)).
 * Pure.
 */
export function submodulePaths(gitmodules: string): { name: string; path: string }[] {
  return parseGitConfig(gitmodules)
    .entries.filter((e) => e.section === "submodule" && e.key === "path" && e.subsection && e.value)
    .map((e) => ({ name: e.subsection as string, path: e.value as string }));
}

/** What gitConfigHazard reads of the files git would read: configs, hooks and what went wrong. */
interface GitFiles {
  configs: string[];
  hooks: string[];
  /** Reasons to ask found while looking (a `.git` file naming nothing, submodules too deep). */
  problems: string[];
}

/**
 * The repository git finds from `dir` (git's setup.c discovery: at each level up, `.git` as a
 * directory or as a file naming one, else the level itself when it is a bare repository, i.e.
 * holds HEAD), and then its submodules (`.gitmodules` paths, each one's own `.git` and
 * `modules/<name>`: git status and diff run git in every submodule). Adds the config files
 * (config, config.worktree, the `commondir`'s config) and read-time hooks of each to `files`.
 */
async function collect(read: ReadText, dir: string, files: GitFiles, depth = 0): Promise<void> {
  for (let d = dir; ; d = posix.dirname(d)) {
    const dotGit = await read(posix.join(d, ".git"));
    const target = dotGit === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(dotGit)?.[1];
    if (dotGit !== null && !target) {
      files.problems.push(`${d}/.git is a file that does not name a git directory`);
      return;
    }
    const git = target ? posix.resolve(d, target) : posix.join(d, ".git");
    if (await repository(read, git, files)) {
      await submodules(read, d, git, files, depth);
      return;
    }
    // A level holding HEAD itself is a bare repository (gitrepository-layout(5)).
    if ((await read(posix.join(d, "HEAD"))) !== null) {
      await repository(read, d, files);
      return;
    }
    if (d === "/") return;
  }
}

/**
 * Adds git dir `git`'s configs and hooks to `files` when it holds HEAD, config or commondir (its
 * config counts even where git, missing HEAD, would look further up: one config too many only
 * asks more); true when it holds HEAD, so that git stops looking there.
 */
async function repository(read: ReadText, git: string, files: GitFiles): Promise<boolean> {
  const [head, config, common] = await Promise.all([
    read(posix.join(git, "HEAD")),
    read(posix.join(git, "config")),
    read(posix.join(git, "commondir")),
  ]);
  if (head === null && config === null && common === null) return false;
  const commonDir = common === null ? git : posix.resolve(git, common.trim());
  // gitrepository-layout(5): config.worktree is read beside config when extensions.worktreeConfig
  // is set (read it whenever present); commondir names where config and hooks live.
  files.configs.push(posix.join(git, "config"), posix.join(git, "config.worktree"));
  for (const dirOfHooks of new Set([git, commonDir])) {
    if (dirOfHooks !== git) files.configs.push(posix.join(dirOfHooks, "config"));
    files.hooks.push(...READ_HOOKS.map((h) => posix.join(dirOfHooks, "hooks", h)));
  }
  return head !== null;
}

/** Adds the submodules of the work tree `top` (git dir `git`) to `files`. */
async function submodules(read: ReadText, top: string, git: string, files: GitFiles, depth: number) {
  const gitmodules = await read(posix.join(top, ".gitmodules"));
  if (gitmodules === null) return;
  const subs = submodulePaths(gitmodules);
  if (subs.length > 0 && depth >= MAX_SUBMODULE_DEPTH) {
    files.problems.push(`${top} has submodules nested more than ${MAX_SUBMODULE_DEPTH} deep`);
    return;
  }
  for (const { name, path } of subs) {
    await repository(read, posix.join(git, "modules", name), files);
    // git enters the submodule's folder itself (is_submodule_modified): its `.git`, no walk up.
    const dir = posix.resolve(top, path);
    const dotGit = await read(posix.join(dir, ".git"));
    const target = dotGit === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(dotGit)?.[1];
    if (dotGit !== null && !target)
      files.problems.push(`${dir}/.git is a file that does not name a git directory`);
    const subGit = target ? posix.resolve(dir, target) : posix.join(dir, ".git");
    if (await repository(read, subGit, files)) await submodules(read, dir, subGit, files, depth + 1);
  }
}

/**
 * Why git run in `dirs` (work-tree directories, absolute) or with `gitDirs` (explicit git
 * directories, `--git-dir`) may run a program from configuration, or null. Reads the global
 * configs, each repository's configs (config, config.worktree, its common dir's), its read-time
 * hooks and its submodules' (see collect), and every file they include; names every
 * program-valued setting of every config with its value, and every hook with its text
 * (shownValue), so the reason changes whenever one of them does. A config git's reader would
 * stop on, or one longer than MAX_GIT_FILE_BYTES (git reads all of it), is a reason too.
 */
export async function gitConfigHazard(
  read: ReadText,
  dirs: string[],
  gitDirs: string[] = [],
): Promise<string | null> {
  const files: GitFiles = { configs: [...GLOBAL_CONFIGS], hooks: [], problems: [] };
  for (const dir of dirs) await collect(read, dir, files);
  for (const git of gitDirs) await repository(read, git, files);
  const configs = [...new Set(files.configs)];
  const hooks = [...new Set(files.hooks)];
  // Read all at once: each read is a round trip into the sandbox.
  const [texts, hookTexts]: [(string | null)[], (string | null)[]] = await Promise.all([
    Promise.all(configs.map(read)),
    Promise.all(hooks.map(read)),
  ]);
  // Included files are read too, so a program set there is named with its value like any other
  // (an approval of `include.path = x` alone would otherwise cover whatever x says later).
  for (let depth = 0, from = 0; depth < MAX_INCLUDE_DEPTH && from < configs.length; depth++) {
    const next = configs
      .slice(from)
      .flatMap((file, k) => includedFiles(texts[from + k] ?? "", file))
      .filter((file, k, all) => !configs.includes(file) && all.indexOf(file) === k);
    from = configs.length;
    configs.push(...next);
    texts.push(...(await Promise.all(next.map(read))));
  }
  const settings: string[] = [];
  const problems = [...files.problems];
  for (const [k, text] of texts.entries()) {
    if (text === null) continue;
    if (Buffer.byteLength(text) > MAX_GIT_FILE_BYTES)
      problems.push(`${configs[k]} is longer than ${MAX_GIT_FILE_BYTES} bytes, so it was not read whole`);
    const error = parseGitConfig(text).error;
    if (error) problems.push(`${configs[k]} is not read as git reads it (${error})`);
    const found = programSettings(text);
    if (found.length > 0) settings.push(`${found.join(", ")} in ${configs[k]}`);
  }
  const reasons =
    settings.length > 0 ? [`git would run a program its configuration names (${settings.join("; ")})`] : [];
  reasons.push(...problems);
  hooks.forEach((hook, k) => {
    const text = hookTexts[k];
    if (text !== null && text !== undefined)
      reasons.push(`git may run the hook ${hook}: ${shownValue(text)}`);
  });
  return reasons.length > 0 ? reasons.join("; ") : null;
}

/** One command of a script, as git-config checking needs it: its argv values (null: not literal). */
export type CommandWords = (string | null)[];

/**
 * Wrappers that run their command in another directory, by name: the option spellings that name
 * it (`-C DIR`, `-CDIR`, `--chdir=DIR`, `--chdir DIR`), or null when any use may (find -execdir
 * runs in each found file's folder; chroot and the namespace tools change the root or directory).
 * From env(1), sudo(8), unshare(1), nsenter(1), find(1).
 */
const CHDIR_WRAPPERS: Record<string, { short: string; long: string } | null> = {
  env: { short: "-C", long: "--chdir" },
  sudo: { short: "-D", long: "--chdir" },
  unshare: { short: "-w", long: "--wd" },
  nsenter: { short: "-w", long: "--wd" },
  chroot: null,
  find: null,
  runuser: null,
  su: null,
};

/** The directories `argv` (a wrapper) runs its command in: [] when none; null when not known. */
function wrapperDirs(argv: CommandWords): string[] | null {
  const name = posix.basename(argv[0] ?? "");
  if (!(name in CHDIR_WRAPPERS)) return [];
  const spelling = CHDIR_WRAPPERS[name];
  if (spelling === null || spelling === undefined)
    return name === "find" && !argv.some((w) => w === "-execdir" || w === "-okdir") ? [] : null;
  const dirs: (string | null)[] = [];
  argv.forEach((w, k) => {
    if (k === 0) return;
    if (w === null) dirs.push(null);
    else if (w === spelling.short || w === spelling.long) dirs.push(argv[k + 1] ?? null);
    else if (w.startsWith(`${spelling.long}=`)) dirs.push(w.slice(spelling.long.length + 1));
    else if (w.startsWith(spelling.short) && !w.startsWith("--")) dirs.push(w.slice(2));
  });
  // A word that is not literal may be the option: not known where the command runs.
  return dirs.every((d): d is string => d !== null) ? dirs.map((d) => posix.resolve("/workspace", d)) : null;
}

/** git's global options whose value is the next word (git(1)); -C and --git-dir are read. */
const GLOBAL_WITH_VALUE = new Set([
  "-c",
  "--namespace",
  "--work-tree",
  "--config-env",
  "--exec-path",
  "--super-prefix",
]);

/** Where one git command runs: work-tree directories from `bases` and `-C`, and `--git-dir`s. */
function gitPlaces(argv: CommandWords, bases: string[]): { dirs: string[]; gitDirs: string[] } | null {
  const chdirs: string[] = [];
  const gitDirs: string[] = [];
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k];
    if (w === null || w === undefined) return null;
    // Global options end at the subcommand (git(1)): the first word not an option.
    if (!w.startsWith("-")) break;
    if (GLOBAL_WITH_VALUE.has(w)) k++;
    const value = w === "-C" || w === "--git-dir" ? argv[k + 1] : undefined;
    if (value === null) return null;
    if (value !== undefined) k++;
    if (w === "-C") chdirs.push(value as string);
    else if (w.startsWith("-C")) chdirs.push(w.slice(2));
    else if (w === "--git-dir") gitDirs.push(value as string);
    else if (w.startsWith("--git-dir=")) gitDirs.push(w.slice("--git-dir=".length));
  }
  const dirs = bases.map((base) => chdirs.reduce((d, c) => posix.resolve(d, c), base));
  return { dirs, gitDirs: gitDirs.flatMap((g) => dirs.map((d) => posix.resolve(d, g))) };
}

/**
 * Why the allowed git commands among `commands` (argv values of every simple command of one
 * script, wrappers included) may run a program from configuration, or null. git runs in
 * /workspace, `-C DIR` on (`git -C a -C b` is a/b), and in the directory a wrapper names
 * (`env -C DIR`, `env --chdir=DIR`): every such directory of the script is checked, with and
 * without each git's `-C` (one repository too many only asks more). A script that changes
 * directory (`cd`), a wrapper whose directory is not literal or not known (`find -execdir`,
 * `chroot`), or a git option value that is not literal leaves the repository unknown: ask.
 */
export async function scriptGitHazard(
  read: ReadText,
  commands: CommandWords[],
  allowedGit: CommandWords[],
): Promise<string | null> {
  if (allowedGit.length === 0) return null;
  if (commands.some((c) => ["cd", "pushd", "popd"].includes(posix.basename(c[0] ?? ""))))
    return "the script changes directory, so which repository configures git is not known";
  const bases = new Set(["/workspace"]);
  for (const argv of commands) {
    const dirs = wrapperDirs(argv);
    if (dirs === null)
      return `${posix.basename(argv[0] ?? "")} runs its command in a directory not known here, so which repository configures git is not known`;
    for (const dir of dirs) bases.add(dir);
  }
  const dirs = new Set<string>();
  const gitDirs = new Set<string>();
  for (const argv of allowedGit) {
    const places = gitPlaces(argv, [...bases]);
    if (places === null)
      return "a git option's value is not literal, so which repository configures git is not known";
    for (const d of places.dirs) dirs.add(d);
    for (const g of places.gitDirs) gitDirs.add(g);
  }
  return gitConfigHazard(read, [...dirs], [...gitDirs]);
}
