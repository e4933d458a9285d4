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
 */
import { createHash } from "node:crypto";
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

/** Longest value or hook text shown whole in a reason; a longer one is cut and named by its digest. */
const MAX_SHOWN_CHARS = 400;

/**
 * `text` as a reason shows it: whole up to MAX_SHOWN_CHARS, else its start and the sha256 of all of
 * it, so the reason (and the session scope made from it) still changes with any change. Pure.
 */
export function shownValue(text: string): string {
  if (text.length <= MAX_SHOWN_CHARS) return text;
  const digest = createHash("sha256").update(text).digest("hex");
  return `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length} characters, sha256 ${digest})`;
}

/** Global config files of the sandbox user (images/sandbox: HOME=/home/sandbox). */
const GLOBAL_CONFIGS = ["/etc/gitconfig", "/home/sandbox/.gitconfig", "/home/sandbox/.config/git/config"];

/** git's own limit on nested includes (MAX_INCLUDE_DEPTH in git's config.c). */
const MAX_INCLUDE_DEPTH = 10;

/**
 * The program-valued settings of a git config text, each `section.key = value` as written (a
 * value continued with a trailing backslash includes its next lines; a key without `=` is shown
 * alone). Pure. `[alias]` entries count when their value starts with `!`; `core.fsmonitor` unless
 * a boolean; every `pager.*` entry that is not a boolean.
 */
export function programSettings(config: string): string[] {
  const found: string[] = [];
  let section = "";
  let sub = false;
  const lines = config.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    let line = (lines[n] as string).replace(/^\s+/, "");
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      const [name, ...rest] = (header[1] as string).toLowerCase().split(".");
      section = name as string;
      sub = header[2] !== undefined || rest.length > 0;
      continue;
    }
    // git joins a line ending in a backslash with the next: the value shown must hold all of it.
    while (line.endsWith("\\") && n + 1 < lines.length) line = `${line}\n${lines[++n]}`;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*([\s\S]*))?$/.exec(line);
    if (!entry || section === "") continue;
    const key = (entry[1] as string).toLowerCase();
    const written = entry[2]?.trim();
    const value = (entry[2] ?? "true").replace(/\\\n/g, "").trim().replace(/^"|"$/g, "");
    const boolean = /^(true|false|yes|no|on|off|0|1)?$/i.test(value);
    const name = sub ? `${section}.*.${key}` : `${section}.${key}`;
    if (
      PROGRAM_KEYS.has(name) ||
      (section === "alias" && value.startsWith("!")) ||
      (section === "pager" && !boolean)
    ) {
      const shown = written === undefined ? "" : ` = ${shownValue(written)}`;
      if (!(name === "core.fsmonitor" && boolean)) found.push(`${section}.${key}${shown}`);
    }
  }
  return found;
}

/**
 * The files the `include.path` and `includeIf.*.path` entries of `config` (the text of `file`) name,
 * resolved as git does: `~/` from the sandbox user's home, a relative path from the config's folder.
 * Every condition counts as met (reading one file too many only asks more). Pure.
 */
export function includedFiles(config: string, file: string): string[] {
  const files: string[] = [];
  for (const setting of programSettings(config)) {
    const value = /^include(?:if)?\.path = ([\s\S]*)$/.exec(setting)?.[1]?.replace(/^"|"$/g, "");
    if (!value) continue;
    files.push(
      value.startsWith("~/")
        ? posix.join("/home/sandbox", value.slice(2))
        : posix.resolve(posix.dirname(file), value),
    );
  }
  return files;
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
 * worktree) and its read-time hooks; names every program-valued setting of every config with its
 * value, and every hook with its text (shownValue), so the reason changes whenever one of them does.
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
  for (const [k, text] of texts.entries()) {
    const found = text === null ? [] : programSettings(text);
    if (found.length > 0) settings.push(`${found.join(", ")} in ${configs[k]}`);
  }
  const reasons =
    settings.length > 0 ? [`git would run a program its configuration names (${settings.join("; ")})`] : [];
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
