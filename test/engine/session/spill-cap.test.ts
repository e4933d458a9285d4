/**
 * Spill caps and handles on both backends (issue 11, item 3; test/helpers/backend.ts): three calls printing more than
 * the session's cap leave at most the cap on the host disk; results name a `/spill/` handle, never
 * a host path; read opens the session's own handle and refuses forged ones.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Session } from "../../../src/session/index.js";
import type { BashToolDetails } from "../../../src/tools/bash.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { createTestSession, describeBackend } from "../../helpers/backend.js";

const TENANT = "test-spill-cap";
const MiB = 1024 * 1024;
/** Bytes of `seq 1 400000`. */
const SEQ_BYTES = 2_688_895;
const text = (r: ToolResultMessage) => (r.content[0]?.type === "text" ? r.content[0].text : "");
/** The bracketed footer at the end of a result's text. */
const footer = (r: ToolResultMessage) => text(r).slice(text(r).lastIndexOf("\n[") + 1);

/** Bytes of the spill files under `dir` (the `.owner` files left out). */
async function spillBytesOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const sub of await readdir(dir)) {
    for (const name of await readdir(join(dir, sub))) {
      if (name !== ".owner") total += (await stat(join(dir, sub, name))).size;
    }
  }
  return total;
}

describeBackend("spill caps and handles in a session", () => {
  let dir: string;
  let session: Session;
  let other: Session;
  const call = async (s: Session, name: string, args: Record<string, unknown>) =>
    (await s.runToolCalls([{ id: `c-${name}`, name, arguments: args }]))[0]!;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-spill-cap-"));
    const options = { tenant: TENANT, spillDir: dir, spillMaxBytesHint: "--spill-max-bytes" };
    session = await createTestSession({ ...options, spillMaxBytes: MiB });
    other = await createTestSession(options);
  });
  afterAll(async () => {
    await session?.close();
    await other?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("three calls printing 2.6 MB each leave exactly the 1 MiB cap on disk; each result says what was kept", async () => {
    const first = await call(session, "bash", { command: "seq 1 400000" });
    const handle = (first.details as BashToolDetails).fullOutputPath!;
    expect(handle).toMatch(/^\/spill\/bash-[0-9a-f]{8}\.log$/);
    expect(footer(first)).toBe(
      "[Showing lines 398001-400000 of 400000. Full output not kept: the session's spill files reached their " +
        `1.0MB cap, so ${handle} holds only its first 1.0MB of 2.6MB (raise the cap with --spill-max-bytes)]`,
    );
    expect((first.details as BashToolDetails).spill).toEqual({
      handle,
      keptBytes: MiB,
      totalBytes: SEQ_BYTES,
      cappedBy: { scope: "session", limitBytes: MiB, raiseHint: "--spill-max-bytes" },
    });
    for (let i = 0; i < 2; i++) {
      const next = await call(session, "bash", { command: "seq 1 400000" });
      expect(footer(next)).toBe(
        "[Showing lines 398001-400000 of 400000. Full output not kept: the session's spill files reached their " +
          "1.0MB cap, so none of it was kept (raise the cap with --spill-max-bytes)]",
      );
    }
    expect(await spillBytesOnDisk(dir)).toBe(MiB);
    // What the model sees never names the host directory.
    expect(JSON.stringify(first)).not.toContain(dir);

    // read opens the handle: the file holds the output's first MiB (165,669 lines, the last one cut).
    const head = await call(session, "read", { path: handle, limit: 2 });
    expect(head.isError).toBe(false);
    expect(text(head)).toBe("1\n2\n\n[165667 more lines in file. Use offset=3 to continue.]");
  }, 120_000);

  it("read refuses forged handles: traversal, another session's handle, unknown names", async () => {
    const theirs = await call(other, "bash", { command: "seq 1 3000" });
    const theirHandle = (theirs.details as BashToolDetails).fullOutputPath!;
    expect(footer(theirs)).toBe(`[Showing lines 1001-3000 of 3000. Full output: ${theirHandle}]`);
    expect(text(await call(other, "read", { path: theirHandle, offset: 3000 }))).toBe("3000\n");
    for (const forged of [
      theirHandle,
      "/spill/../etc/passwd",
      "/spill/../../proc/self/environ",
      "/spill/.owner",
    ]) {
      const r = await call(session, "read", { path: forged });
      expect([forged, r.isError, text(r)]).toEqual([
        forged,
        true,
        `Spill file not found: ${forged}. A spill handle is valid only in the session whose result named it, until that session closes.`,
      ]);
    }
  });
});
