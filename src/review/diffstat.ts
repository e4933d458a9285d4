/** A diffstat of a run's changes, like `git diff --stat`: lines added and removed per file. */
import type { FileChange } from "./changes.js";
import type { FilePatch } from "./patch.js";
import { quotePath } from "./quote-path.js";

/** Per-file counts; `binary` and `special` files have no line counts. */
interface DiffstatFile {
  path: string;
  kind: FileChange["kind"];
  added: number;
  removed: number;
  binary: boolean;
  special?: string;
}

/** All files plus totals. */
export interface Diffstat {
  files: DiffstatFile[];
  added: number;
  removed: number;
}

/** Counts added and removed lines of each file's patch (patchChanges); links are special, uncounted. */
export function computeDiffstat(patches: FilePatch[]): Diffstat {
  const files = patches.map(({ change, added, removed, binary }): DiffstatFile => {
    const base = { path: change.path, kind: change.kind, added: 0, removed: 0 };
    if (change.special !== undefined) return { ...base, binary: false, special: change.special };
    if (binary) return { ...base, binary: true };
    return { ...base, added, removed, binary: false };
  });
  return {
    files,
    added: files.reduce((n, f) => n + f.added, 0),
    removed: files.reduce((n, f) => n + f.removed, 0),
  };
}

/** Colours for formatDiffstat (picocolors-like); identity functions give plain text. */
export interface StatColours {
  green: (s: string) => string;
  red: (s: string) => string;
}

const plain: StatColours = { green: (s) => s, red: (s) => s };

/**
 * Text like git's: ` path | 3 ++-` per file, then ` N files changed, A insertions(+), D deletions(-)`.
 * Special entries show `(symlink, not applied)`. Names are quoted as git quotes them (quote-path.ts),
 * so an escape sequence or newline in a name is shown escaped, never sent to the terminal raw.
 */
export function formatDiffstat(stat: Diffstat, colours: StatColours = plain): string {
  if (stat.files.length === 0) return " no files changed\n";
  const names = stat.files.map((f) => quotePath(f.path));
  const width = Math.max(...names.map((n) => n.length));
  const lines = stat.files.map((f, i) => {
    const name = names[i]!.padEnd(width);
    if (f.special) return ` ${name} | (${f.special}, not applied)`;
    if (f.binary) return ` ${name} | Bin`;
    const bar =
      colours.green("+".repeat(Math.min(f.added, 40))) + colours.red("-".repeat(Math.min(f.removed, 40)));
    return ` ${name} | ${String(f.added + f.removed).padStart(4)} ${bar}`.trimEnd();
  });
  const n = stat.files.length;
  lines.push(
    ` ${n} file${n === 1 ? "" : "s"} changed, ${stat.added} insertion${stat.added === 1 ? "" : "s"}(+), ` +
      `${stat.removed} deletion${stat.removed === 1 ? "" : "s"}(-)`,
  );
  return `${lines.join("\n")}\n`;
}
