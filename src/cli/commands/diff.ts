/**
 * `warden diff <transcript-or-patch>`: shows a saved run's change again: the patch `warden run` saved
 * next to its transcript (`<transcript>.patch`), coloured on a TTY, with `--stat` a diffstat instead.
 * Exit 0, or 2 when there is no saved patch.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { parsePatch } from "diff";
import pc from "picocolors";
import { patchPathFor } from "../../agent/index.js";
import { NotFoundError } from "../../errors.js";
import { colourPatch, quotePath } from "../../review/index.js";
import { terminalSafe } from "../../util/index.js";

/** The saved patch for a transcript (or the file itself when it is a patch). Throws NotFoundError. */
export function savedPatchPath(file: string): string {
  if (file.endsWith(".patch") && existsSync(file)) return file;
  const candidate = patchPathFor(file);
  if (existsSync(candidate)) return candidate;
  if (!existsSync(file)) throw new NotFoundError(`No such transcript or patch: ${file}.`);
  throw new NotFoundError(
    `No saved patch for ${file} (looked for ${candidate}): that run changed no files, was not in copy mode, or was interrupted.`,
  );
}

/** `git diff --stat`-like lines from patch text (counts from the diff package's parsePatch). */
export function statOfPatch(text: string): string {
  const files = parsePatch(text).map((p) => {
    // Quoted as git quotes names: an escape sequence in a name must not reach the terminal raw.
    const name = quotePath(
      (p.newFileName === "/dev/null" ? p.oldFileName : p.newFileName)?.replace(/^[ab]\//, "") ?? "?",
    );
    let added = 0;
    let removed = 0;
    for (const h of p.hunks) {
      for (const l of h.lines) {
        if (l.startsWith("+")) added++;
        else if (l.startsWith("-")) removed++;
      }
    }
    return { name, added, removed };
  });
  const width = Math.max(0, ...files.map((f) => f.name.length));
  const lines = files.map(
    (f) =>
      ` ${f.name.padEnd(width)} | ${String(f.added + f.removed).padStart(4)} ${"+".repeat(Math.min(f.added, 40))}${"-".repeat(Math.min(f.removed, 40))}`,
  );
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  lines.push(
    ` ${files.length} file${files.length === 1 ? "" : "s"} changed, ${added} insertion${added === 1 ? "" : "s"}(+), ${removed} deletion${removed === 1 ? "" : "s"}(-)`,
  );
  return `${lines.join("\n")}\n`;
}

/** Registers `warden diff`. */
export function registerDiff(program: Command): void {
  program
    .command("diff")
    .description("show the change a saved `warden run` made (its transcript or patch file)")
    .argument("<file>", "a transcript written by warden run (or its .patch)")
    .option("--stat", "a diffstat instead of the patch")
    .option("--no-color", "never colour")
    .action((file: string, flags: { stat?: boolean; color?: boolean }) => {
      const text = readFileSync(savedPatchPath(file), "utf8");
      if (flags.stat) process.stdout.write(statOfPatch(text));
      else
        process.stdout.write(
          // The names are quoted by the renderer; file contents may still hold escape sequences.
          colourPatch(
            terminalSafe(text),
            flags.color !== false && process.stdout.isTTY === true && pc.isColorSupported,
          ),
        );
    });
}
