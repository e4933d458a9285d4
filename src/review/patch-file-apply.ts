/**
 * `warden apply <patch>`: a saved session patch (git format, full index lines, patch.ts) applied
 * later with the same checks as `--apply` (apply.ts: a three-way merge onto the host that writes
 * nothing when a file conflicts, confined, no link followed). Each file's session-start version (the
 * merge base) comes from the base store saved beside the patch (`<patch>.base/<blob id>`), or from
 * the host when the host file still has the patch's preimage id. The session's version is the base
 * with the patch applied by `git apply` in a scratch directory. Links (mode 120000) and files shown
 * only as "Binary files … differ" are skipped, as `--apply` skips them.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { InvalidArgumentError } from "../errors.js";
import type { FileChange } from "./changes.js";
import { gitBlobId, NULL_OID } from "./git-binary.js";
import { hostPathFor } from "./host-paths.js";
import { withHostEntry } from "./host-read.js";
import { GIT_DIR_REASON, isGitControlPath } from "./ignored.js";
import { quotePath, unquotePath } from "./quote-path.js";

const run = promisify(execFile);

/** One file section of a patch: path, blob ids, new file mode, and whether it is applicable. */
interface Section {
  path: string;
  text: string;
  from?: string;
  to?: string;
  newMode?: number;
  skip?: string;
}

/** The directory beside `patchPath` holding session-start blobs by git blob id. */
export function baseStorePath(patchPath: string): string {
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
export function diffGitPath(names: string): string | undefined {
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
 * Splits patch text into file sections. Names are read back as the renderer quotes them (patch.ts),
 * so a name holding a newline stays one section. A path with a `.git` component is marked skipped.
 * Throws InvalidArgumentError when there is no section or a `diff --git` line is malformed.
 */
export function splitPatch(text: string): Section[] {
  const sections: Section[] = [];
  const starts = [...text.matchAll(/^diff --git (.*)$/gm)];
  starts.forEach((m, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.index : text.length;
    const body = text.slice(m.index, end);
    const path = diffGitPath(m[1]!);
    if (path === undefined)
      throw new InvalidArgumentError(`The patch has a malformed \`diff --git\` line: ${quotePath(m[0])}`);
    const section: Section = { path, text: body };
    const index = /^index ([0-9a-f]{40})\.\.([0-9a-f]{40})/m.exec(body);
    if (index) [section.from, section.to] = [index[1]!, index[2]!];
    const mode = /^new file mode (\d+)$/m.exec(body);
    if (mode) section.newMode = Number.parseInt(mode[1]!, 8) & 0o777;
    if (isGitControlPath(path)) section.skip = GIT_DIR_REASON;
    else if (/^(new|deleted) file mode 120000$/m.test(body)) section.skip = "symlink not applied";
    else if (/^Binary files .* differ$/m.test(body))
      section.skip = "over the review's file size limit when saved (no content in the patch), not applied";
    sections.push(section);
  });
  if (sections.length === 0)
    throw new InvalidArgumentError("The file holds no git-format patch (no `diff --git` line).");
  return sections;
}

async function hostState(
  root: string,
  path: string,
): Promise<{ bytes: Buffer | null; mode?: number } | "other"> {
  return withHostEntry(root, path, async (entry) => {
    if (entry.type === "absent") return { bytes: null };
    if (entry.type === "file") return { bytes: await entry.handle.readFile(), mode: entry.mode };
    return "other";
  });
}

/** The session-start bytes of a section, or undefined when they cannot be known. */
async function baseOf(
  section: Section,
  host: Buffer | null,
  store: string,
): Promise<Buffer | null | undefined> {
  if (section.from === NULL_OID) return null;
  if (section.from === undefined) return host;
  if (gitBlobId(host) === section.from) return host;
  const kept = join(store, section.from);
  return existsSync(kept) ? readFile(kept) : undefined;
}

/**
 * Reads `patchPath` and turns it into the FileChanges applyChanges merges onto `hostRoot` (old side:
 * the session-start version; new side: the session's). `unknownBase` lists files whose host version
 * changed and whose session-start version is not saved; `skipped` the sections not applicable.
 * Rejects InvalidArgumentError for a file that is not a patch or that git cannot apply to its base.
 */
export async function changesFromPatch(
  hostRoot: string,
  patchPath: string,
): Promise<{
  changes: FileChange[];
  unknownBase: string[];
  skipped: Array<{ path: string; reason: string }>;
}> {
  const sections = splitPatch(await readFile(patchPath, "utf8"));
  const store = baseStorePath(patchPath);
  const scratch = await mkdtemp(join(tmpdir(), "warden-apply-"));
  const changes: FileChange[] = [];
  const unknownBase: string[] = [];
  const skipped: Array<{ path: string; reason: string }> = [];
  try {
    const applicable: Array<{ section: Section; base: Buffer | null; mode?: number }> = [];
    for (const section of sections) {
      hostPathFor(hostRoot, section.path); // throws for a path leading out of the workspace
      if (section.skip) {
        skipped.push({ path: section.path, reason: section.skip });
        continue;
      }
      const host = await hostState(hostRoot, section.path);
      const base = await baseOf(section, host === "other" ? null : host.bytes, store);
      if (base === undefined || host === "other") {
        unknownBase.push(section.path);
        continue;
      }
      applicable.push({
        section,
        base,
        mode: section.newMode ?? (host.bytes !== null ? host.mode : undefined),
      });
    }
    const tree = join(scratch, "tree");
    for (const { section, base } of applicable) {
      if (base === null) continue;
      await mkdir(dirname(join(tree, section.path)), { recursive: true });
      await writeFile(join(tree, section.path), base);
    }
    await mkdir(tree, { recursive: true });
    await writeFile(join(scratch, "p.patch"), applicable.map((a) => a.section.text).join(""));
    if (applicable.length > 0) {
      await run("git", ["apply", "--whitespace=nowarn", join(scratch, "p.patch")], {
        cwd: tree,
        env: { ...process.env, GIT_CEILING_DIRECTORIES: scratch },
      }).catch((err: { stderr?: string }) => {
        throw new InvalidArgumentError(
          `git apply could not apply ${patchPath} to the session-start files: ${String(err.stderr ?? err).trim()}`,
        );
      });
    }
    for (const { section, base, mode } of applicable) {
      const full = join(tree, section.path);
      const result = existsSync(full) ? await readFile(full) : null;
      const kind = base === null ? "added" : result === null ? "deleted" : "modified";
      changes.push({
        path: section.path,
        kind,
        oldBytes: base,
        newBytes: result,
        ...(mode !== undefined ? { mode } : {}),
      });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { changes, unknownBase, skipped };
}
