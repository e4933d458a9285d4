/**
 * `warden apply <patch>`: a saved session patch (git format, full index lines, patch.ts) applied
 * later with the same checks as `--apply` (apply.ts: a three-way merge onto the host that writes
 * nothing when a file conflicts, confined, no link followed). Each file's session-start version (the
 * merge base) comes from the base store saved beside the patch (`<patch>.base/<blob id>`), or from
 * the host when the host file still has the patch's preimage id. The session's version is the base
 * with the patch applied by `git apply` in a scratch directory. What applies is apply-rule.ts's rule,
 * as for `--apply`: a link made or changed (mode 120000) and a file shown only as "Binary files …
 * differ" are skipped; a host link deleted, or replaced by a file, is applied.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { InvalidArgumentError } from "../errors.js";
import { applyRefusal } from "./apply-rule.js";
import type { FileChange } from "./changes.js";
import { gitBlobId, NULL_OID } from "./git-binary.js";
import { hostPathFor } from "./host-paths.js";
import { withHostEntry } from "./host-read.js";
import { quotePath, unquotePath } from "./quote-path.js";

const run = promisify(execFile);

/**
 * One file section of a patch: path, blob ids, new file mode, whether it deletes (`fromLink`) or
 * adds (`toLink`) a link, and `skip`, why `warden apply` refuses it (apply-rule.ts).
 */
interface Section {
  path: string;
  text: string;
  from?: string;
  to?: string;
  newMode?: number;
  fromLink?: true;
  toLink?: true;
  skip?: string;
}

/** The directory beside `patchPath` holding session-start blobs by git blob id. */
function baseStorePath(patchPath: string): string {
  return `${patchPath}.base`;
}

/** Saves the session-start side of each change into the base store of `patchPath`. */
export async function saveBaseStore(patchPath: string, changes: FileChange[]): Promise<void> {
  const dir = baseStorePath(patchPath);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const c of changes) {
    if (c.oldBytes === null || c.special !== undefined || c.oversize) continue;
    await writeFile(join(dir, gitBlobId(c.oldBytes)), c.oldBytes, { mode: 0o600 });
  }
}

/**
 * The path of a `diff --git` line's names (what follows `diff --git `): the `b/` name, quoted as git
 * quotes it or plain (then both names are the same path, which may hold spaces). Undefined when
 * the line is malformed.
 */
function diffGitPath(names: string): string | undefined {
  if (names.startsWith('"')) {
    const a = unquotePath(names);
    if (!a || names[a.end] !== " ") return undefined;
    const rest = names.slice(a.end + 1);
    const b = rest.startsWith('"') ? unquotePath(rest) : { name: rest, end: rest.length };
    if (!b || b.end !== rest.length || !b.name.startsWith("b/")) return undefined;
    return b.name.slice(2);
  }
  const length = (names.length - 5) / 2;
  const path = names.slice(2, 2 + length);
  return names === `a/${path} b/${path}` ? path : undefined;
}

/**
 * The lines of `text` as git reads a patch: split at `\n` only. JavaScript's `^`, `$` and `.` with
 * the `m` flag also end a line at `\r`, U+2028 and U+2029, which git keeps inside a line, so a
 * file whose content held `\rdiff --git a/ln b/ln\rdeleted file mode 120000` was read as sections
 * git never saw (attack-38a: `warden apply` removed a host link the session never touched).
 */
function gitLines(text: string): string[] {
  return text.split("\n");
}

/** Where each `diff --git ` line of `text` starts (after a `\n`, or at 0), and its names. */
function diffGitLines(text: string): Array<{ index: number; names: string }> {
  const out: Array<{ index: number; names: string }> = [];
  let index = 0;
  for (const line of gitLines(text)) {
    if (line.startsWith("diff --git ")) out.push({ index, names: line.slice("diff --git ".length) });
    index += line.length + 1;
  }
  return out;
}

/**
 * A section's extended header lines (git's `index`, `new file mode`, `deleted file mode`…): the
 * lines after its `diff --git` line up to its first `--- `, `+++ `, `@@`, `Binary files ` or `GIT
 * binary patch` line. Content lines never start there: each begins with ` `, `+`, `-` or `\`.
 */
function extendedHeader(body: string): string[] {
  const lines = gitLines(body).slice(1);
  const end = lines.findIndex((l) => /^(--- |\+\+\+ |@@|Binary files |GIT binary patch)/.test(l));
  return end < 0 ? lines : lines.slice(0, end);
}

/**
 * Splits patch text into file sections at `diff --git` lines, reading lines as git does (split at
 * `\n` only: gitLines). Names are read back as the renderer quotes them (patch.ts), so a name
 * holding a newline stays one section. A section apply-rule.ts refuses (a `.git` path, a link
 * added, no content) is marked skipped.
 * Throws InvalidArgumentError when there is no section or a `diff --git` line is malformed.
 */
export function splitPatch(text: string): Section[] {
  const sections: Section[] = [];
  const starts = diffGitLines(text);
  starts.forEach((m, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.index : text.length;
    const body = text.slice(m.index, end);
    const path = diffGitPath(m.names);
    if (path === undefined)
      throw new InvalidArgumentError(
        `The patch has a malformed \`diff --git\` line: ${quotePath(`diff --git ${m.names}`)}`,
      );
    const section: Section = { path, text: body };
    const header = extendedHeader(body);
    const index = header.map((l) => /^index ([0-9a-f]{40})\.\.([0-9a-f]{40})/.exec(l)).find((x) => x);
    if (index) [section.from, section.to] = [index[1]!, index[2]!];
    const mode = header.map((l) => /^new file mode (\d+)$/.exec(l)).find((x) => x);
    if (mode) section.newMode = Number.parseInt(mode[1]!, 8) & 0o777;
    if (header.includes("deleted file mode 120000")) section.fromLink = true;
    if (mode?.[1] === "120000") section.toLink = true;
    const binary = gitLines(body).some((l) => /^Binary files .* differ$/.test(l));
    const skip = applyRefusal({
      path,
      ...(section.toLink ? { special: "symlink" } : {}),
      ...(binary ? { oversize: true as const } : {}),
    });
    if (skip) section.skip = skip;
    sections.push(section);
  });
  if (sections.length === 0)
    throw new InvalidArgumentError("The file holds no git-format patch (no `diff --git` line).");
  return sections;
}

/** One path's sections: one, or a deletion and the addition after it (a type change, as patch.ts renders it). */
interface Entry {
  path: string;
  sections: Section[];
}

function entriesOf(sections: Section[]): Entry[] {
  const entries: Entry[] = [];
  for (const section of sections) {
    const last = entries.at(-1);
    const head = last?.sections[0];
    const pairs =
      last?.path === section.path &&
      last.sections.length === 1 &&
      head?.to === NULL_OID &&
      section.from === NULL_OID;
    if (pairs) last.sections.push(section);
    else entries.push({ path: section.path, sections: [section] });
  }
  return entries;
}

/** One side as a patch carries it: bytes, and whether they are a link's target. */
interface Side {
  bytes: Buffer;
  link: boolean;
  mode?: number;
}

/** The host entry at `path` now: absent (null), a file or a link (Side), or another entry. */
async function hostState(root: string, path: string): Promise<Side | null | "other"> {
  return withHostEntry(root, path, async (entry) => {
    if (entry.type === "absent") return null;
    if (entry.type === "file") return { bytes: await entry.handle.readFile(), link: false, mode: entry.mode };
    if (entry.type === "symlink") return { bytes: Buffer.from(entry.target), link: true };
    return "other";
  });
}

/**
 * The session-start side of an entry (from its first section's preimage id): the host's entry when
 * it still has that id (a link only where the section deletes a link, or changes one), else the base
 * store's blob; null when absent at the start, undefined when it cannot be known.
 */
async function baseOf(head: Section, host: Side | null, store: string): Promise<Side | null | undefined> {
  if (head.from === NULL_OID) return null;
  if (head.from === undefined) return host;
  if (host && gitBlobId(host.bytes) === head.from && (host.link || !head.fromLink)) return host;
  const kept = join(store, head.from);
  return existsSync(kept) ? { bytes: await readFile(kept), link: head.fromLink === true } : undefined;
}

/** What changesFromPatch found: the changes to merge, and the paths it cannot or will not apply. */
export interface PatchChanges {
  changes: FileChange[];
  unknownBase: string[];
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * Reads `patchPath` and turns it into the FileChanges applyChanges merges onto `hostRoot` (old side:
 * the session-start version; new side: the session's). What applies is apply-rule.ts's rule: a
 * section making or changing a link is skipped; a link's deletion (alone, or followed by the file
 * that replaced it) is a change whose old side is that link. `unknownBase` lists files whose host
 * version changed and whose session-start version is not saved; `skipped` the entries not
 * applicable. Rejects InvalidArgumentError for a file that is not a patch or that git cannot apply
 * to its base.
 */
export async function changesFromPatch(hostRoot: string, patchPath: string): Promise<PatchChanges> {
  const entries = entriesOf(splitPatch(await readFile(patchPath, "utf8")));
  const store = baseStorePath(patchPath);
  const out: PatchChanges = { changes: [], unknownBase: [], skipped: [] };
  const applicable: Array<{ entry: Entry; base: Side | null; git: Section[]; mode?: number }> = [];
  for (const entry of entries) {
    hostPathFor(hostRoot, entry.path); // throws for a path leading out of the workspace
    const [head] = entry.sections as [Section];
    const skip = entry.sections.find((s) => s.skip)?.skip;
    if (skip) {
      out.skipped.push({ path: entry.path, reason: skip });
      continue;
    }
    const host = await hostState(hostRoot, entry.path);
    const base = host === "other" ? undefined : await baseOf(head, host, store);
    if (base === undefined) {
      out.unknownBase.push(entry.path);
      continue;
    }
    // A section that changes a link (not its deletion) leaves a link: refused as a link made.
    if (base?.link && !head.fromLink) {
      out.skipped.push({ path: entry.path, reason: applyRefusal({ path: entry.path, special: "symlink" })! });
      continue;
    }
    const git = head.fromLink ? entry.sections.slice(1) : entry.sections;
    const mode = git.at(-1)?.newMode ?? (host !== "other" && host && !host.link ? host.mode : undefined);
    applicable.push({ entry, base, git, ...(mode !== undefined ? { mode } : {}) });
  }
  const scratch = await mkdtemp(join(tmpdir(), "warden-apply-"));
  try {
    const tree = join(scratch, "tree");
    await mkdir(tree, { recursive: true });
    for (const { entry, base } of applicable) {
      if (base === null || base.link) continue;
      await mkdir(dirname(join(tree, entry.path)), { recursive: true });
      await writeFile(join(tree, entry.path), base.bytes);
    }
    const text = applicable.flatMap((a) => a.git.map((s) => s.text)).join("");
    await writeFile(join(scratch, "p.patch"), text);
    if (text !== "") {
      await run("git", ["apply", "--whitespace=nowarn", join(scratch, "p.patch")], {
        cwd: tree,
        env: { ...process.env, GIT_CEILING_DIRECTORIES: scratch },
      }).catch((err: { stderr?: string }) => {
        throw new InvalidArgumentError(
          `git apply could not apply ${patchPath} to the session-start files: ${String(err.stderr ?? err).trim()}`,
        );
      });
    }
    for (const { entry, base, mode } of applicable) {
      const full = join(tree, entry.path);
      const result = existsSync(full) ? await readFile(full) : null;
      const kind = base === null ? "added" : result === null ? "deleted" : "modified";
      out.changes.push({
        path: entry.path,
        kind,
        oldBytes: base?.bytes ?? null,
        newBytes: result,
        ...(base?.link ? { oldLink: true as const } : {}),
        ...(mode !== undefined ? { mode } : {}),
      });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return out;
}
