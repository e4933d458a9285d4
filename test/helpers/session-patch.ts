/** A saved copy-mode session patch on disk, for `warden apply` tests. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  computeDiffstat,
  type SessionReview,
  saveSessionPatch,
  workspaceRecordOf,
} from "../../src/review/index.js";
import { patchChanges } from "../../src/review/patch.js";

/**
 * How warden's messages show a workspace record: "device D, inode I[, made ISO-8601 (ms)]", the birth
 * time from nanoseconds since the epoch.
 */
export const recordIdentity = (
  r: { dev?: string; ino?: string; born?: string | bigint } | undefined,
): string =>
  `device ${r?.dev}, inode ${r?.ino}${r?.born ? `, made ${new Date(Number(BigInt(r.born) / 1_000_000n)).toISOString()}` : ""}`;

/** A fresh temporary directory. */
export const fresh = () => mkdtempSync(join(tmpdir(), "warden-ws-record-"));

/** A workspace holding a.txt = "one\n", and the saved patch of a session that made it "two\n". */
export async function sessionPatch(): Promise<{ ws: string; patch: string; out: string }> {
  const ws = join(fresh(), "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "a.txt"), "one\n");
  const changes = [
    {
      path: "a.txt",
      kind: "modified" as const,
      oldBytes: Buffer.from("one\n"),
      newBytes: Buffer.from("two\n"),
      mode: 0o644,
    },
  ];
  const patches = await patchChanges(changes);
  const review: SessionReview = {
    changes,
    stat: computeDiffstat(patches),
    patch: patches.map((p) => p.text).join(""),
    snapshot: new Map(),
    ignored: [],
    refused: [],
    hostRoot: ws,
    workspace: await workspaceRecordOf(ws),
  };
  const out = fresh();
  const patch = join(out, "s.patch");
  await saveSessionPatch(patch, review);
  return { ws, patch, out };
}
