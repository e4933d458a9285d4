/**
 * Issue 11: a bash output flood (`seq 1 9000000`, 70,888,896 bytes) over a slow spill disk, against
 * a real engine: the spill queue fills, the exec path pauses its stream (the helper and the
 * command's pipe wait) instead of the spill writer calling writeSync on the event loop, and the
 * spill file is still exactly the command's output. node:fs is wrapped: writev is slowed (a busy
 * disk), writeSync is watched.
 */
import { createHash } from "node:crypto";
import { afterEach, expect, it, vi } from "vitest";
import type { Sandbox, SandboxOptions } from "../../../src/sandbox/types.js";
import { createSpillStore, type HostSpillStore } from "../../../src/session/spill-store.js";
import { type BashToolDetails, createBashTool } from "../../../src/tools/bash.js";
import type { ToolOutput } from "../../../src/tools/types.js";
import { backendLeftovers, createTestSandbox, describeBackend, itDocker } from "../../helpers/backend.js";

const disk = vi.hoisted(() => ({ writtenBytes: 0, delayMs: 40 }));
vi.mock("node:fs", async (importOriginal) =>
  (await import("../../helpers/slow-disk.js")).slowDiskFs(await importOriginal(), disk),
);
const fs = await import("node:fs");

const TENANT = "test-bash-flood";
const LINES = 9_000_000;

/** sha256 and length of `seq 1 LINES`'s output. */
function seqDigest(): { bytes: number; sha256: string } {
  const hash = createHash("sha256");
  let bytes = 0;
  const step = 100_000;
  for (let from = 1; from <= LINES; from += step) {
    const lines: string[] = [];
    for (let n = from; n < from + step && n <= LINES; n++) lines.push(`${n}\n`);
    const chunk = Buffer.from(lines.join(""));
    bytes += chunk.length;
    hash.update(chunk);
  }
  return { bytes, sha256: hash.digest("hex") };
}

let sandbox: Sandbox | undefined;
let spill: HostSpillStore | undefined;
afterEach(async () => {
  await sandbox?.destroy();
  await spill?.dispose();
  sandbox = undefined;
  spill = undefined;
  expect(await backendLeftovers(TENANT)).toEqual([]);
});

async function flood(options: Partial<SandboxOptions>): Promise<void> {
  sandbox = await createTestSandbox({ tenant: TENANT, ...options });
  spill = createSpillStore({ sessionId: sandbox.info.sessionId });
  disk.writtenBytes = 0;
  vi.mocked(fs.writeSync).mockClear();
  const out = (await createBashTool().execute(
    "flood",
    { command: `seq 1 ${LINES}` },
    { sandbox, spill },
  )) as ToolOutput<BashToolDetails>;
  const expected = seqDigest();
  expect(expected.bytes).toBe(70_888_896);
  expect(out.details).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
  expect(out.details?.truncation).toMatchObject({ truncated: true, totalLines: LINES });
  expect(out.details?.spill).toBeUndefined(); // everything kept
  expect(out.content[0]).toMatchObject({ text: expect.stringContaining(`\n${LINES}\n`) });
  const file = fs.readFileSync(spill.hostPathOf(out.details?.fullOutputPath as string) as string);
  expect(file.length).toBe(expected.bytes);
  expect(createHash("sha256").update(file).digest("hex")).toBe(expected.sha256);
  // Every byte went through the background writes; none was written on the event loop.
  expect(disk.writtenBytes).toBe(expected.bytes);
  expect(fs.writeSync).not.toHaveBeenCalled();
}

describeBackend("bash output flood over a slow spill disk", () => {
  it("channel: the spill file is exactly the output (size, sha256), with no synchronous write", async () => {
    await flood({});
  }, 180_000);

  itDocker(
    "docker exec is a Docker path",
    "docker-exec: the spill file is exactly the output (size, sha256), with no synchronous write",
    async () => {
      await flood({ execPath: "docker-exec" });
    },
    180_000,
  );
});
