/**
 * `warden run`'s review (issue 37 item 6): the saved and the `--export-patch` patch carry only what
 * `warden apply` applies; a link made in the sandbox is listed in the review and in the sidecar
 * `<patch>.left-out.json` beside each, never in a patch `git apply` would turn into a link.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reviewStep } from "../../../src/agent/review-step.js";
import {
  computeDiffstat,
  type FileChange,
  patchChanges,
  type SessionReview,
  splitApplicable,
  workspaceRecordOf,
} from "../../../src/review/index.js";

/** A review as finishReview builds it: every change in the stat, only the applicable ones in the patch. */
async function review(ws: string, changes: FileChange[]): Promise<SessionReview> {
  const { applicable, refused } = splitApplicable(changes);
  return {
    changes,
    stat: computeDiffstat(await patchChanges(changes)),
    patch: (await patchChanges(applicable)).map((p) => p.text).join(""),
    refused,
    ignored: [],
    snapshot: new Map(),
    hostRoot: ws,
    workspace: await workspaceRecordOf(ws),
  };
}

const LINK: FileChange = {
  path: "shadow",
  kind: "added",
  oldBytes: null,
  newBytes: Buffer.from("../../../../etc/shadow"),
  newLink: true,
  special: "symlink",
};
const FILE: FileChange = {
  path: "new.txt",
  kind: "added",
  oldBytes: null,
  newBytes: Buffer.from("new\n"),
  mode: 0o644,
};

describe("warden run's review step", () => {
  it("saves and exports a patch without the link, which it lists in the review and beside each patch", async () => {
    const ws = mkdtempSync(join(tmpdir(), "warden-review-ws-"));
    const out = mkdtempSync(join(tmpdir(), "warden-review-out-"));
    const transcript = join(out, "run.jsonl");
    const exported = join(out, "export.patch");
    const said: string[] = [];
    const outcome = await reviewStep({
      review: await review(ws, [FILE, LINK]),
      transcriptPath: transcript,
      exportPatch: exported,
      say: (text) => said.push(text),
    });
    expect(outcome).toEqual({ files: 2, savedPatch: `${transcript}.patch`, exportedPatch: exported });
    for (const patch of [`${transcript}.patch`, exported]) {
      const text = readFileSync(patch, "utf8");
      expect(text).toContain("diff --git a/new.txt b/new.txt\n");
      expect(text).not.toContain("shadow");
      expect(JSON.parse(readFileSync(`${patch}.left-out.json`, "utf8"))).toEqual([
        { path: "shadow", reason: "symlink not applied" },
      ]);
    }
    expect(said.slice(0, 2)).toEqual([
      "Left out of the patch, never applied (warden apply refuses them):",
      "  shadow (symlink not applied)",
    ]);
    expect(said).toContain(
      `Patch exported to ${exported} (apply later with: git apply ${exported}); 1 change(s) left out of it are listed in ${exported}.left-out.json`,
    );
  });

  it("saves no patch when nothing the session changed can be applied", async () => {
    const ws = mkdtempSync(join(tmpdir(), "warden-review-ws-"));
    const out = mkdtempSync(join(tmpdir(), "warden-review-out-"));
    const said: string[] = [];
    const transcript = join(out, "run.jsonl");
    const outcome = await reviewStep({
      review: await review(ws, [LINK]),
      transcriptPath: transcript,
      say: (t) => said.push(t),
    });
    expect(outcome).toEqual({ files: 1 });
    expect(said.at(-1)).toBe("None of these changes can be applied (listed above); no patch saved.");
    expect(existsSync(`${transcript}.patch`)).toBe(false);
  });
});
