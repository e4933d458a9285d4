/**
 * `warden apply <patch-or-transcript>`: applies a saved session's change to the host workspace later,
 * with the same checks as `warden run --apply` (src/review/patch-file-apply.ts, apply.ts): a
 * three-way merge with host edits made since the session started; when any file conflicts, nothing is
 * written and each file is named. `--check` only reports. It applies to the workspace the patch
 * records (its `warden-workspace:` first line, review/workspace-record.ts; for a transcript whose
 * patch has none, the run_start record), and refuses, naming it, when that directory is gone or is
 * another directory now (device and inode differ); `--workspace DIR` overrides. A patch recording
 * no workspace (e.g. `--export-patch`'s, or any git patch) applies to the current directory, like
 * `git apply`. It does not ask. Exit 0 applied (or would apply), 1 conflicts, 2 no such patch, not a
 * patch, or the recorded workspace gone or moved.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { readRunTranscript } from "../../agent/index.js";
import { WardenError } from "../../errors.js";
import {
  applyChanges,
  changesFromPatch,
  checkWorkspaceRecord,
  MergeConflictError,
  mergeFile,
  quotePath,
  readWorkspaceHeader,
  type WorkspaceRecord,
} from "../../review/index.js";
import { savedPatchPath } from "./diff.js";

interface ApplyFlags {
  workspace?: string;
  check?: boolean;
}

const say = (text: string) => process.stdout.write(`${text}\n`);

/**
 * The workspace `patchPath` records (its header line), else the one transcript `file`'s run_start
 * records (path, and device and inode when it has them), else undefined.
 */
function recordedWorkspace(file: string, patchPath: string): WorkspaceRecord | undefined {
  const header = readWorkspaceHeader(readFileSync(patchPath, "utf8"));
  if (header || file === patchPath) return header;
  const start = readRunTranscript(file).records.find((r) => r.warden === "run_start");
  if (start?.warden !== "run_start" || !start.workspace || !start.workspaceId) return undefined;
  return { path: start.workspace, ...start.workspaceId };
}

/**
 * The directory to apply to: `--workspace`, else the recorded one (checked: WorkspaceMovedError when
 * it is gone or another directory), else the current directory.
 */
async function targetOf(file: string, patchPath: string, flags: ApplyFlags): Promise<string> {
  if (flags.workspace) return resolve(flags.workspace);
  const recorded = recordedWorkspace(file, patchPath);
  if (!recorded) return process.cwd();
  await checkWorkspaceRecord(recorded, file);
  return recorded.path;
}

/** Runs the command; sets process.exitCode (see module doc). */
export async function runApply(file: string, flags: ApplyFlags): Promise<void> {
  let root: string;
  let patchPath: string;
  let parsed: Awaited<ReturnType<typeof changesFromPatch>>;
  try {
    patchPath = existsSync(file) && !file.endsWith(".jsonl") ? file : savedPatchPath(file);
    root = await targetOf(file, patchPath, flags);
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
        const o = await mergeFile(root, {
          path: c.path,
          base: c.oldBytes,
          theirs: c.newBytes,
          ...(c.oldLink ? { baseLink: true } : {}),
        });
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
      "apply a saved session's change (warden run, exec, replay, mcp) to its workspace later (a three-way merge with your edits)",
    )
    .argument("<file>", "a run's transcript, a saved session .patch, or an exported patch")
    .option(
      "-w, --workspace <dir>",
      "the workspace to apply to (default: the one the patch records, else the current directory)",
    )
    .option("--check", "only report whether it applies; write nothing")
    .action((file: string, flags: ApplyFlags) => runApply(file, flags));
}
