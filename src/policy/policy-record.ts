/**
 * Which policy a CLI session runs under, as a transcript records it: the shipped default file
 * (policies/default.yaml, found beside the package's code, so an installed package finds its own
 * copy), the reserved name `allow-all` (no policy: every call is allowed), or policy files, each
 * with the sha256 of its bytes and one digest of them all, so a later replay can tell whether the
 * files it would load are the ones the run ran under.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WardenError } from "../errors.js";

/** The reserved `--policy` name that turns the policy off: every tool call is allowed. */
export const ALLOW_ALL_POLICY = "allow-all";

/**
 * The shipped default policy file, absolute: `<package root>/policies/default.yaml` (this module
 * is `src/policy/…` in the repository and `dist/policy/…` in a package, both two levels below the
 * root; package.json's `files` ships `policies/`).
 */
export const DEFAULT_POLICY_FILE = fileURLToPath(new URL("../../policies/default.yaml", import.meta.url));

/** One policy file as recorded: its absolute path and the sha256 (hex) of its bytes. */
export interface PolicyFileRecord {
  path: string;
  sha256: string;
}

/**
 * The policy a session ran under. `allowAll`: no policy (`--policy allow-all`). Otherwise the files,
 * highest authority first, and `digest`: the sha256 (hex) of the files' sha256 lines
 * (`<sha256>\n` each, in order), so the same bytes in the same order give the same digest.
 */
export type PolicyRecord = { allowAll: true } | { files: PolicyFileRecord[]; digest: string };

const sha256 = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

/** The digest of files whose sha256 values are `hashes`, in order (see PolicyRecord). */
function policyDigest(hashes: readonly string[]): string {
  return sha256(hashes.map((h) => `${h}\n`).join(""));
}

/**
 * Records `files` (paths resolved against the current directory): each file's sha256 and the
 * digest. Rejects with the fs error (ENOENT…) when a file cannot be read.
 */
export async function recordPolicyFiles(files: readonly string[]): Promise<PolicyRecord> {
  const records: PolicyFileRecord[] = [];
  for (const file of files) {
    const path = resolve(file);
    records.push({ path, sha256: sha256(await readFile(path)) });
  }
  return { files: records, digest: policyDigest(records.map((r) => r.sha256)) };
}

/** What `recorded`'s files hold now: the digest of their current bytes, and the files gone. */
export interface RecordedPolicyCheck {
  /** The digest of the files as they are now; undefined when any is gone (unreadable). */
  digest?: string;
  /** Paths that cannot be read any more. */
  missing: string[];
}

/** Reads the recorded files again (see RecordedPolicyCheck). Never rejects. */
export async function recheckPolicyFiles(recorded: {
  files: PolicyFileRecord[];
}): Promise<RecordedPolicyCheck> {
  const hashes: string[] = [];
  const missing: string[] = [];
  for (const f of recorded.files) {
    const bytes = await readFile(f.path).catch(() => undefined);
    if (bytes === undefined) missing.push(f.path);
    else hashes.push(sha256(bytes));
  }
  return missing.length > 0 ? { missing } : { digest: policyDigest(hashes), missing };
}

/** True for a value shaped like a PolicyRecord (a transcript is read back from disk). */
export function isPolicyRecord(value: unknown): value is PolicyRecord {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { allowAll?: unknown; files?: unknown; digest?: unknown };
  if (v.allowAll === true) return true;
  return (
    typeof v.digest === "string" &&
    Array.isArray(v.files) &&
    v.files.every(
      (f) =>
        typeof (f as PolicyFileRecord)?.path === "string" &&
        typeof (f as PolicyFileRecord)?.sha256 === "string",
    )
  );
}

/**
 * The policy files a transcript recorded changed or are gone since its run, so replaying under
 * them would not be the run's policy. Code CONFLICT; the message names both digests (or the files
 * gone) and the fix: `--policy FILE` (or `--policy allow-all`) to choose the replay's policy.
 */
export class RecordedPolicyChangedError extends WardenError {
  constructor(
    readonly source: string,
    readonly recorded: { files: PolicyFileRecord[]; digest: string },
    readonly now: RecordedPolicyCheck,
  ) {
    const files = recorded.files.map((f) => f.path).join(", ");
    const what =
      now.missing.length > 0
        ? `${now.missing.join(", ")} ${now.missing.length === 1 ? "is" : "are"} gone`
        : `they changed: their digest is now sha256:${now.digest}`;
    super(
      "CONFLICT",
      `${source} ran under the policy ${files} (digest sha256:${recorded.digest}), but ${what}. ` +
        "Replaying under other rules than the run's is refused: choose the replay's policy with --policy FILE (or --policy allow-all), or restore the files.",
    );
  }
}
