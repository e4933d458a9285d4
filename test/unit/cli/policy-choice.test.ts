/** The CLI's policy choice: the shipped default without --policy, allow-all only when asked, replay's recorded policy. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { choosePolicy, policyFromTranscript, policyRecordOf } from "../../../src/cli/flags/policy-choice.js";
import { RecordedPolicyChangedError } from "../../../src/policy/index.js";
import { ALLOW_ALL_NOTICE, DEFAULT_POLICY_NOTICE, DEFAULT_POLICY_PATH } from "../../helpers/cli-policy.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("choosePolicy", () => {
  it("without --policy: the shipped policies/default.yaml, said in one line naming how to choose another", () => {
    expect(choosePolicy(undefined)).toEqual({
      files: [DEFAULT_POLICY_PATH],
      allowAll: false,
      notice: DEFAULT_POLICY_NOTICE.trimEnd(),
    });
    expect(choosePolicy([])).toEqual(choosePolicy(undefined));
  });

  it("--policy allow-all: no policy files, and a notice that every call is allowed", () => {
    expect(choosePolicy(["allow-all"])).toEqual({
      files: [],
      allowAll: true,
      notice: ALLOW_ALL_NOTICE.trimEnd(),
    });
  });

  it("refuses allow-all combined with policy files, naming both and the fix", () => {
    expect(() => choosePolicy(["p.yaml", "allow-all"])).toThrow(
      "--policy allow-all turns the policy off, so it cannot be combined with policy files (got --policy p.yaml --policy allow-all): pass --policy allow-all alone, or only the files (a file named allow-all: --policy ./allow-all).",
    );
  });

  it("--policy FILE: those files, no notice", () => {
    expect(choosePolicy(["a.yaml", "./allow-all"])).toEqual({
      files: ["a.yaml", "./allow-all"],
      allowAll: false,
    });
  });
});

describe("policyFromTranscript", () => {
  const dir = mkdtempSync(join(tmpdir(), "warden-policy-choice-"));
  const file = join(dir, "p.yaml");

  it("records files by sha256 and one digest of them; allow-all as such", async () => {
    writeFileSync(file, "default: allow\n");
    expect(await policyRecordOf({ files: [file], allowAll: false })).toEqual({
      files: [{ path: file, sha256: sha256("default: allow\n") }],
      digest: sha256(`${sha256("default: allow\n")}\n`),
    });
    expect(await policyRecordOf({ files: [], allowAll: true })).toEqual({ allowAll: true });
  });

  it("uses the recorded files while their bytes are the same", async () => {
    writeFileSync(file, "default: allow\n");
    const recorded = await policyRecordOf({ files: [file], allowAll: false });
    expect(await policyFromTranscript("t.jsonl", recorded, undefined)).toEqual({
      files: [file],
      allowAll: false,
      notice: `warden: policy: ${file} (sha256:${sha256(`${sha256("default: allow\n")}\n`)}), as t.jsonl recorded; choose another with --policy FILE`,
    });
  });

  it("refuses when a recorded file changed, naming both digests and --policy", async () => {
    writeFileSync(file, "default: allow\n");
    const recorded = await policyRecordOf({ files: [file], allowAll: false });
    writeFileSync(file, "default: deny\n");
    const was = sha256(`${sha256("default: allow\n")}\n`);
    const now = sha256(`${sha256("default: deny\n")}\n`);
    const err = await policyFromTranscript("t.jsonl", recorded, undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecordedPolicyChangedError);
    expect((err as RecordedPolicyChangedError).code).toBe("CONFLICT");
    expect((err as Error).message).toBe(
      `t.jsonl ran under the policy ${file} (digest sha256:${was}), but they changed: their digest is now sha256:${now}. ` +
        "Replaying under other rules than the run's is refused: choose the replay's policy with --policy FILE (or --policy allow-all), or restore the files.",
    );
  });

  it("refuses when a recorded file is gone, naming it", async () => {
    writeFileSync(file, "default: allow\n");
    const recorded = await policyRecordOf({ files: [file], allowAll: false });
    rmSync(file);
    await expect(policyFromTranscript("t.jsonl", recorded, undefined)).rejects.toThrow(
      `t.jsonl ran under the policy ${file} (digest sha256:${sha256(`${sha256("default: allow\n")}\n`)}), but ${file} is gone. `,
    );
  });

  it("--policy overrides the record and says so; a recorded allow-all is kept and said", async () => {
    const recorded = { allowAll: true as const };
    expect(await policyFromTranscript("t.jsonl", recorded, [file])).toEqual({
      files: [file],
      allowAll: false,
      notice: `warden: policy: ${file} (--policy), instead of the one t.jsonl recorded: allow-all`,
    });
    expect(await policyFromTranscript("t.jsonl", recorded, undefined)).toEqual({
      files: [],
      allowAll: true,
      notice:
        "warden: policy: allow-all, as t.jsonl recorded (every tool call is allowed); choose another with --policy FILE",
    });
  });

  it("a transcript without a record gets the default", async () => {
    expect(await policyFromTranscript("t.jsonl", undefined, undefined)).toEqual(choosePolicy(undefined));
  });
});
