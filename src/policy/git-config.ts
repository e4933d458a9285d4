/**
 * git runs programs its configuration names (issue 13, item 4): a read-only `git status` or
 * `git diff` runs core.fsmonitor, diff.external, core.pager, textconv and filter drivers, `!`
 * aliases and hooks. The policy runs on the controller and the command in the sandbox, so rather
 * than rewriting the command, a git command a policy would allow becomes `ask` when the repository
 * it runs in (its `.git` directory, or the one a `.git` file points to) or the sandbox user's
 * global config sets a program-valued key, includes another file, or holds a hook git may run on a
 * read. Keys from git-config(1), githooks(5) and gitattributes(5).
 */
import { posix } from "node:path";

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
]);

/** Hooks git may run during a read-only command (post-index-change on an index refresh). */
const READ_HOOKS = ["post-index-change", "reference-transaction", "fsmonitor-watchman", "pre-auto-gc"];

/** Global config files of the sandbox user (images/sandbox: HOME=/home/sandbox). */
const GLOBAL_CONFIGS = ["/etc/gitconfig", "/home/sandbox/.gitconfig", "/home/sandbox/.config/git/config"];

/**
 * The program-valued settings of a git config text, each `section.key` as written. Pure.
 * `[alias]` entries count when their value starts with `!`; `core.fsmonitor` unless a boolean;
 * every `pager.*` entry that is not a boolean.
 */
export function programSettings(config: string): string[] {
  const found: string[] = [];
  let section = "";
  let sub = false;
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "");
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      const [name, ...rest] = (header[1] as string).toLowerCase().split(".");
      section = name as string;
      sub = header[2] !== undefined || rest.length > 0;
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!entry || section === "") continue;
    const key = (entry[1] as string).toLowerCase();
    const value = (entry[2] ?? "true").trim().replace(/^"|"$/g, "");
    const boolean = /^(true|false|yes|no|on|off|0|1)?$/i.test(value);
    const name = sub ? `${section}.*.${key}` : `${section}.${key}`;
    if (
      PROGRAM_KEYS.has(name) ||
      (section === "alias" && value.startsWith("!")) ||
      (section === "pager" && !boolean)
    ) {
      if (!(name === "core.fsmonitor" && boolean)) found.push(`${section}.${key}`);
    }
  }
  return found;
}

/** The git directory for a work tree `dir`: `dir/.git`, or where a `.git` file points. */
async function gitDir(read: ReadText, dir: string): Promise<string | null> {
  const file = await read(posix.join(dir, ".git"));
  if (file === null) return posix.join(dir, ".git");
  const target = /^gitdir:\s*(.+?)\s*$/m.exec(file)?.[1];
  return target ? posix.resolve(dir, target) : null;
}

/**
 * Why git run in `dirs` (work-tree directories, absolute) may run a program from configuration,
 * or null. Reads the global configs, each repository's config (and its common dir's, for a
 * worktree) and its read-time hooks.
 */
export async function gitConfigHazard(read: ReadText, dirs: string[]): Promise<string | null> {
  const configs = [...GLOBAL_CONFIGS];
  const hooks: string[] = [];
  for (const dir of dirs) {
    for (let d = dir; ; d = posix.dirname(d)) {
      const git = await gitDir(read, d);
      if (git === null) return `${d}/.git is a file that does not name a git directory`;
      const config = await read(posix.join(git, "config"));
      const common = await read(posix.join(git, "commondir"));
      if (config !== null || common !== null) {
        configs.push(posix.join(git, "config"));
        if (common !== null) configs.push(posix.join(posix.resolve(git, common.trim()), "config"));
        hooks.push(...READ_HOOKS.map((h) => posix.join(git, "hooks", h)));
        break;
      }
      if (d === "/") break;
    }
  }
  // Read all at once: each read is a round trip into the sandbox.
  const [texts, hookTexts] = await Promise.all([
    Promise.all(configs.map(read)),
    Promise.all(hooks.map(read)),
  ]);
  for (const [k, text] of texts.entries()) {
    const settings = text === null ? [] : programSettings(text);
    if (settings.length > 0)
      return `git would run a program its configuration names (${settings.join(", ")} in ${configs[k]})`;
  }
  const hook = hooks.find((_h, k) => hookTexts[k] !== null);
  if (hook) return `git may run the hook ${hook}`;
  return null;
}

/** One command of a script, as git-config checking needs it: its argv values (null: not literal). */
export type CommandWords = (string | null)[];

/**
 * Why the allowed git commands among `commands` (argv values of every simple command of one
 * script) may run a program from configuration, or null. A script that changes directory leaves
 * the repository unknown; `git -C DIR` is checked in DIR (relative to /workspace).
 */
export async function scriptGitHazard(
  read: ReadText,
  commands: CommandWords[],
  allowedGit: CommandWords[],
): Promise<string | null> {
  if (allowedGit.length === 0) return null;
  if (commands.some((c) => ["cd", "pushd", "popd"].includes(posix.basename(c[0] ?? ""))))
    return "the script changes directory, so which repository configures git is not known";
  const dirs = new Set<string>();
  for (const argv of allowedGit) {
    let dir = "/workspace";
    argv.forEach((w, k) => {
      if (w === "-C") dir = posix.resolve(dir, argv[k + 1] ?? ".");
      else if (w?.startsWith("-C") && k > 0) dir = posix.resolve(dir, w.slice(2));
    });
    dirs.add(dir);
  }
  return gitConfigHazard(read, [...dirs]);
}
