/**
 * The policy of a CLI session (`exec`, `run`, `replay`, `mcp`): safe by default. Without `--policy`
 * the shipped default policy (policies/default.yaml) applies; `--policy allow-all` (a reserved name,
 * alone: combined with files it is refused) turns the policy off; `--policy FILE` (repeatable)
 * layers files. `replay` of a `warden run` transcript takes the policy the transcript recorded
 * (policyFromTranscript). Each choice but explicit files says which policy applies on stderr, in
 * one line that also names how to choose another.
 */
import { InvalidArgumentError } from "../../errors.js";
import {
  ALLOW_ALL_POLICY,
  DEFAULT_POLICY_FILE,
  type PolicyRecord,
  RecordedPolicyChangedError,
  recheckPolicyFiles,
  recordPolicyFiles,
} from "../../policy/index.js";

/** A session's policy: the files to load (highest authority first; none for allow-all) and its notice. */
export interface PolicyChoice {
  /** Policy files to load; empty when `allowAll`. */
  files: string[];
  /** True for `--policy allow-all` (or a transcript that recorded it): no policy hook at all. */
  allowAll: boolean;
  /** The stderr line saying which policy applies (with its `warden: ` prefix, no newline), if any. */
  notice?: string;
}

const CHOOSE = "choose another with --policy FILE, or allow every call with --policy allow-all";

/**
 * The choice `--policy` values make (see module doc). Throws InvalidArgumentError when allow-all
 * is combined with other values (a file named `allow-all` is passed as `./allow-all`).
 */
export function choosePolicy(values: readonly string[] | undefined): PolicyChoice {
  if (!values || values.length === 0)
    return {
      files: [DEFAULT_POLICY_FILE],
      allowAll: false,
      notice: `warden: policy: the default, ${DEFAULT_POLICY_FILE} (secrets and rm denied; workspace reads, copy-mode edits and common read-only and build/test commands allowed; anything else asks); ${CHOOSE}`,
    };
  if (values.includes(ALLOW_ALL_POLICY)) {
    if (values.length > 1)
      throw new InvalidArgumentError(
        `--policy allow-all turns the policy off, so it cannot be combined with policy files (got --policy ${values.join(" --policy ")}): pass --policy allow-all alone, or only the files (a file named allow-all: --policy ./allow-all).`,
      );
    return {
      files: [],
      allowAll: true,
      notice: "warden: policy: allow-all (--policy allow-all): every tool call is allowed, none is checked",
    };
  }
  return { files: [...values], allowAll: false };
}

/** What the transcript records for `choice` (see PolicyRecord). Rejects with the fs error of an unreadable file. */
export async function policyRecordOf(choice: PolicyChoice): Promise<PolicyRecord> {
  return choice.allowAll ? { allowAll: true } : recordPolicyFiles(choice.files);
}

function describeRecord(record: PolicyRecord): string {
  return "allowAll" in record
    ? "allow-all"
    : `${record.files.map((f) => f.path).join(", ")} (sha256:${record.digest})`;
}

/**
 * The policy of a replay of transcript `source`, which recorded `recorded` (undefined: it records
 * none, e.g. not a `warden run` transcript; then choosePolicy applies). `--policy` values override
 * the record, and the notice says so. Otherwise the recorded files are read again: when any changed
 * or is gone, rejects with RecordedPolicyChangedError (naming both digests and `--policy`).
 */
export async function policyFromTranscript(
  source: string,
  recorded: PolicyRecord | undefined,
  values: readonly string[] | undefined,
): Promise<PolicyChoice> {
  if (!recorded) return choosePolicy(values);
  if (values && values.length > 0) {
    const choice = choosePolicy(values);
    const chosen = choice.allowAll ? "allow-all" : choice.files.join(", ");
    return {
      ...choice,
      notice: `warden: policy: ${chosen} (--policy), instead of the one ${source} recorded: ${describeRecord(recorded)}`,
    };
  }
  if ("allowAll" in recorded)
    return {
      files: [],
      allowAll: true,
      notice: `warden: policy: allow-all, as ${source} recorded (every tool call is allowed); choose another with --policy FILE`,
    };
  const now = await recheckPolicyFiles(recorded);
  if (now.digest !== recorded.digest) throw new RecordedPolicyChangedError(source, recorded, now);
  return {
    files: recorded.files.map((f) => f.path),
    allowAll: false,
    notice: `warden: policy: ${describeRecord(recorded)}, as ${source} recorded; choose another with --policy FILE`,
  };
}
