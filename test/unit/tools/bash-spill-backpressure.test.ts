/**
 * Issue 11: a bash call's output flood over a slow spill disk. The spill queue fills; the bash
 * tool's output callback returns the writer's promise and the channel pauses its transport (so the
 * helper, and the command's pipe, wait) instead of the writer calling writeSync on the event loop.
 * node:fs is wrapped: writev is slowed (a busy disk), writeSync is watched.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChannelClient, type ChannelTransport } from "../../../src/sandbox/channel/protocol/client.js";
import { channelExec } from "../../../src/sandbox/channel/protocol/exec.js";
import { encodeFrame, FrameDecoder, FrameType } from "../../../src/sandbox/channel/protocol/frame.js";
import { OutputShare } from "../../../src/sandbox/channel/protocol/output-share.js";
import type { Sandbox } from "../../../src/sandbox/index.js";
import {
  createSpillStore,
  type HostSpillStore,
  SPILL_QUEUE_MAX_BYTES,
} from "../../../src/session/spill-store.js";
import { createBashTool } from "../../../src/tools/bash.js";

const disk = vi.hoisted(() => ({ writtenBytes: 0, delayMs: 15 }));
vi.mock("node:fs", async (importOriginal) =>
  (await import("../../helpers/slow-disk.js")).slowDiskFs(await importOriginal(), disk),
);
const fs = await import("node:fs");

const MiB = 1024 * 1024;
const FRAME = 64 * 1024;
/** Frames per transport read: what can still arrive after a pause took hold. */
const FRAMES_PER_READ = 4;

/** One stdout frame's payload: frame `i` of the flood. */
const payload = (i: number) => Buffer.alloc(FRAME, 0x61 + (i % 26));

/**
 * A helper that answers an exec request with `totalBytes` of stdout in reads of FRAMES_PER_READ
 * frames, one read per event-loop turn while its transport is not paused, then exit 0. Records
 * pause/resume and the most bytes ever sent but not yet on the disk.
 */
function floodingHelper(totalBytes: number) {
  const state = { events: [] as string[], sentBytes: 0, maxUnwritten: 0 };
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  let paused = false;
  let id = 0;
  let next = 0;
  const frames = totalBytes / FRAME;
  const pump = () => {
    if (paused || !sinks) return;
    if (next >= frames) {
      sinks.onData(encodeFrame(FrameType.exit, id, Buffer.from('{"code":0}')));
      return;
    }
    const read: Buffer[] = [];
    for (let k = 0; k < FRAMES_PER_READ && next < frames; k++, next++)
      read.push(encodeFrame(FrameType.stdout, id, payload(next)));
    state.sentBytes += read.length * FRAME;
    state.maxUnwritten = Math.max(state.maxUnwritten, state.sentBytes - disk.writtenBytes);
    sinks.onData(Buffer.concat(read));
    setImmediate(pump);
  };
  const decoder = new FrameDecoder((frame) => {
    if (frame.type !== FrameType.exec) return;
    id = frame.id;
    setImmediate(pump);
  });
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (s) => {
      sinks = s;
    },
    close: () => sinks?.onClose("closed"),
    pause: () => {
      paused = true;
      state.events.push("pause");
    },
    resume: () => {
      paused = false;
      state.events.push("resume");
      setImmediate(pump);
    },
  };
  return { transport, state };
}

let parent: string;
let spill: HostSpillStore;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "warden-spill-bp-"));
  spill = createSpillStore({ dir: parent, sessionId: "bp" });
  disk.writtenBytes = 0;
  vi.mocked(fs.writeSync).mockClear();
});
afterEach(async () => {
  await spill.dispose();
  rmSync(parent, { recursive: true, force: true });
});

describe("bash output flood over a slow spill disk (channel path)", () => {
  it("pauses the channel instead of writing on the event loop; memory stays bounded, every byte kept in order", async () => {
    const total = 40 * MiB;
    const { transport, state } = floodingHelper(total);
    const client = new ChannelClient(transport, { containerId: "c1", share: new OutputShare() });
    const sandbox = { exec: (command, options) => channelExec(client, command, options) } as Pick<
      Sandbox,
      "exec"
    >;
    const out = await createBashTool().execute(
      "flood",
      { command: "head -c 40M /dev/zero" },
      { sandbox: sandbox as Sandbox, spill },
    );
    // The structural facts: no synchronous write, and the producer was paused (and resumed).
    expect(fs.writeSync).not.toHaveBeenCalled();
    expect(state.events.filter((e) => e === "pause").length).toBeGreaterThanOrEqual(1);
    expect(state.events.at(-1)).toBe("resume");
    // Bounded: at most the queue plus one transport read was ever waiting for the disk.
    expect(state.maxUnwritten).toBeLessThanOrEqual(SPILL_QUEUE_MAX_BYTES + FRAMES_PER_READ * FRAME);
    // Every byte, in order, through the background writes.
    expect(disk.writtenBytes).toBe(total);
    const handle = out.details?.fullOutputPath as string;
    expect(handle).toMatch(/^\/spill\/bash-/);
    expect(out.details?.spill).toBeUndefined();
    const expected = createHash("sha256");
    for (let i = 0; i < total / FRAME; i++) expected.update(payload(i));
    const file = readFileSync(spill.hostPathOf(handle) as string);
    expect(file.length).toBe(total);
    expect(createHash("sha256").update(file).digest("hex")).toBe(expected.digest("hex"));
    client.close();
  }, 60_000);
});
