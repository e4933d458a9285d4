/**
 * `warden apply <patch-or-transcript>`: applies a saved session's change to the host workspace later,
 * with the same checks as `warden run --apply` (src/review/patch-file-apply.ts, apply.ts): a
 * three-way merge with host edits made since the session started; when any file conflicts, nothing is
 * written and each file is named. `--check` only reports. Like `git apply`, it applies to the current
 * directory unless `--workspace` names another, and it does not ask. Exit 0 applied (or would apply),
 * 1 conflicts, 2 no such patch or not a patch.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { WardenError } from "../../errors.js";
import {
  applyChanges,
  changesFromPatch,
  MergeConflictError,
  mergeFile,
  quotePath,
} from "../../review/index.js";
import { savedPatchPath } from "./diff.js";

interface ApplyFlags {
  workspace?: string;
  check?: boolean;
}

const say = (text: string) => process.stdout.write(`${text}\n`);

/** Runs the command; sets process.exitCode (see module doc). */
export async function runApply(file: string, flags: ApplyFlags): Promise<void> {
  const root = resolve(flags.workspace ?? process.cwd());
  let patchPath: string;
  let parsed: Awaited<ReturnType<typeof changesFromPatch>>;
  try {
    patchPath = existsSync(file) && !file.endsWith(".jsonl") ? file : savedPatchPath(file);
    parsed = await changesFromPatch(root, patchPath);
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    process.stderr.write(`warden: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  const unknown = parsed.unknownBase.map((path) => ({
    path,
    reason: `changed on the host, and its session-start version is not saved beside the patch (${patchPath}.base)`,
  }));
  try {
    if (unknown.length > 0) throw new MergeConflictError(unknown);
    if (flags.check) {
      const conflicts = [];
      for (const c of parsed.changes) {
        const o = await mergeFile(root, { path: c.path, base: c.oldBytes, theirs: c.newBytes });
        if (o.kind === "conflict") conflicts.push({ path: o.path, reason: o.reason });
      }
      if (conflicts.length > 0) throw new MergeConflictError(conflicts);
      say(`${patchPath} applies to ${root} (${parsed.changes.length} file(s); nothing written: --check).`);
    } else {
      const result = await applyChanges(root, parsed.changes);
      say(
        `Applied ${patchPath} to ${root}: ${result.written.length} written, ${result.deleted.length} deleted.`,
      );
      if (result.merged.length > 0)
        say(`  merged with your edits made meanwhile: ${result.merged.map(quotePath).join(", ")}`);
    }
  } catch (err) {
    if (!(err instanceof MergeConflictError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
    return;
  }
  // Names come from the patch: quoted as git quotes them, so no escape sequence reaches the terminal.
  for (const s of parsed.skipped) say(`  skipped ${quotePath(s.path)}: ${s.reason}`);
}

/** Registers `warden apply`. */
export function registerApply(program: Command): void {
  program
    .command("apply")
    .description(
      "apply a saved `warden run` change to the workspace later (a three-way merge with your edits)",
    )
    .argument("<file>", "the run's transcript or its saved .patch (or an exported patch)")
    .option("-w, --workspace <dir>", "the workspace to apply to (default: the current directory)")
    .option("--check", "only report whether it applies; write nothing")
    .action((file: string, flags: ApplyFlags) => runApply(file, flags));
}
