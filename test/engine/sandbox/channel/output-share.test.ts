/**
 * The output share against a real engine (issue 11, noisy neighbour): while another sandbox's
 * channel has a command running, a flood is paced to the share's rate all the way back to the
 * command (the attach socket is paused; the helper's backpressure blocks the writer), and every
 * byte still arrives.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  CONTENDED_BURST_MS,
  channelExec,
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  outputShare,
} from "../../../../src/sandbox/channel/index.js";
import { channelTenant, type HelperBox, startHelperBox } from "../../../helpers/channel-fixture.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers } from "../../../helpers/sandbox-fixture.js";

const tenant = channelTenant("share");
const MiB = 1024 * 1024;

describeEngine("channel output share", () => {
  let a: HelperBox;
  let b: HelperBox;
  beforeAll(async () => {
    [a, b] = await Promise.all([startHelperBox(tenant), startHelperBox(tenant)]);
  });
  afterAll(async () => {
    await Promise.all([a?.destroy(), b?.destroy()]);
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("paces a 64 MiB flood to 16 MiB/s while another channel runs a command, losing no byte", async () => {
    expect(outputShare.bytesPerSecond).toBe(DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND);
    const other = channelExec(b.client, { shell: "sleep 8" });
    let bytes = 0;
    const t0 = performance.now();
    const r = await channelExec(
      a.client,
      { shell: "head -c 67108864 /dev/zero" },
      { onStdout: (c) => (bytes += c.length) },
    );
    const ms = performance.now() - t0;
    expect(r.exitCode).toBe(0);
    expect(bytes).toBe(64 * MiB);
    // 64 MiB less the 100 ms burst (1.6 MiB) at 16 MiB/s: at least 3.9 s (unpaced: well under 2 s).
    const floorMs = ((64 * MiB - (16 * MiB * CONTENDED_BURST_MS) / 1000) / (16 * MiB)) * 1000;
    expect(floorMs).toBe(3900);
    expect(ms).toBeGreaterThanOrEqual(floorMs);
    expect((await other).exitCode).toBe(0);
  }, 60_000);
});
