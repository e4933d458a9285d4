import type { FileChange } from "./changes.js";
import { binaryPatchBody, gitBlobId } from "./git-binary.js";
import { type HunkText, hunkText } from "./patch-hunks.js";
import { quotePath } from "./quote-path.js";

/**
 * How a patch section gets its hunk text: patch-hunks.ts's hunkText (large sides in its worker pool)
 * on the event loop; hunkTextOf, on its own thread, in the patch worker (patch-bytes-worker.ts).
 */
export type SectionHunks = (oldText: string, newText: string, signal?: AbortSignal) => Promise<HunkText>;

/** True when the bytes look binary: a NUL in the first 8000 bytes (git's heuristic). */
export function isBinary(bytes: Buffer | null): boolean {
  return bytes?.subarray(0, 8000).includes(0) ?? false;
}

/** One file's patch text and its line counts (`binary` when shown as "Binary files … differ"). */
export interface FilePatch {
  change: FileChange;
  text: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** One side of a patch section: bytes, and whether they are a link's target. */
interface Side {
  bytes: Buffer;
  link: boolean;
}

function modeLine(side: Side, mode: number | undefined): string {
  if (side.link) return "120000";
  return (mode ?? 0o644) & 0o111 ? "100755" : "100644";
}

/** The sections of a change: one, or a deletion plus an addition when file and link swap. */
function sections(change: FileChange): Array<[Side | null, Side | null]> {
  const from = change.oldBytes === null ? null : { bytes: change.oldBytes, link: change.oldLink === true };
  const to = change.newBytes === null ? null : { bytes: change.newBytes, link: change.newLink === true };
  if (from && to && from.link !== to.link)
    return [
      [from, null],
      [null, to],
    ];
  return [[from, to]];
}

async function formatSection(
  change: FileChange,
  from: Side | null,
  to: Side | null,
  signal: AbortSignal | undefined,
  hunks: SectionHunks,
): Promise<FilePatch> {
  const { path } = change;
  const out: FilePatch = { change, text: "", added: 0, removed: 0, binary: false };
  if (from === null && to === null) return out;
  // Quoted as git quotes names: a raw newline in a name would start a forged line of the patch.
  const [a, b] = [quotePath(`a/${path}`), quotePath(`b/${path}`)];
  const head = [`diff --git ${a} ${b}`];
  if (from === null && to !== null) head.push(`new file mode ${modeLine(to, change.mode)}`);
  if (to === null && from !== null) head.push(`deleted file mode ${modeLine(from, undefined)}`);
  const fromName = from === null ? "/dev/null" : a;
  const toName = to === null ? "/dev/null" : b;
  if (change.oversize) {
    out.binary = true;
    out.text = `${[...head, `Binary files ${fromName} and ${toName} differ`].join("\n")}\n`;
    return out;
  }
  head.push(`index ${gitBlobId(from?.bytes ?? null)}..${gitBlobId(to?.bytes ?? null)}`);
  if (isBinary(from?.bytes ?? null) || isBinary(to?.bytes ?? null)) {
    out.binary = true;
    if (from !== null && to !== null && from.bytes.equals(to.bytes)) return out;
    out.text = `${[...head, ...binaryPatchBody(from?.bytes ?? null, to?.bytes ?? null)].join("\n")}\n`;
    return out;
  }
  const oldText = from?.bytes.toString("utf8") ?? "";
  const newText = to?.bytes.toString("utf8") ?? "";
  const body = await hunks(oldText, newText, signal);
  if (body.hunks === 0 && from !== null && to !== null) return out;
  out.added = body.added;
  out.removed = body.removed;
  out.text = `${[...head, `--- ${fromName}`, `+++ ${toName}`].join("\n")}\n${body.text}`;
  return out;
}

/**
 * The patch of one file change (text "" for a directory or other special entry, or when the contents
 * are equal), its hunk texts from `hunks` (default hunkText). Rejects only AbortError when `signal`
 * fires.
 */
export async function patchFile(
  change: FileChange,
  signal?: AbortSignal,
  hunks: SectionHunks = hunkText,
): Promise<FilePatch> {
  const empty: FilePatch = { change, text: "", added: 0, removed: 0, binary: false };
  if (change.special !== undefined && change.special !== "symlink") return empty;
  const parts: FilePatch[] = [];
  for (const [from, to] of sections(change)) parts.push(await formatSection(change, from, to, signal, hunks));
  return parts.reduce(
    (all, p) => ({
      change,
      text: all.text + p.text,
      added: all.added + p.added,
      removed: all.removed + p.removed,
      binary: all.binary || p.binary,
    }),
    empty,
  );
}

/** Every file's patch, in the changes' (path) order. */
export async function patchChanges(
  changes: FileChange[],
  options: { signal?: AbortSignal } = {},
): Promise<FilePatch[]> {
  const patches: FilePatch[] = [];
  for (const change of changes) patches.push(await patchFile(change, options.signal));
  return patches;
}

/** The whole patch text of `changes`. Rejects only AbortError when `signal` fires. */
export async function formatPatch(
  changes: FileChange[],
  options: { signal?: AbortSignal } = {},
): Promise<string> {
  return (await patchChanges(changes, options)).map((p) => p.text).join("");
}
