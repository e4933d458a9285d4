/**
 * PodChannel when the channel's helper ended with an exit status (channel-end.ts): never re-opened;
 * every later call names the Pod, why and what to do, from GETs of the Pod that settle.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it, vi } from "vitest";
import { AbortError } from "../../../../src/util/index.js";
import { echo, fakeCluster, open, RUNNING, SETTLE, sleep, sleeping } from "./fake-pod-cluster.js";

describe("PodChannel: the channel's helper ended", () => {
  it("a helper that ended (killed by a newer channel: another controller took over) is not fought over", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const running = (await sleeping(fake, channel)).outcome;
    fake.helperKilled();
    const message =
      "the exec channel to Pod ns/warden-s1 ended (the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)) while the Pod still runs: " +
      "a command in the sandbox may have killed the channel's helper (e.g. kill -9 -1), or another warden controller took the Pod over; " +
      "the channel is not re-opened, so two controllers never take a Pod from each other, and the Pod is left running for whoever holds it; " +
      "start a new session, and DELETE this one (deleting it deletes the Pod).";
    expect(await running).toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    await expect(echo(channel, "x")).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    await sleep(50);
    expect(fake.sockets).toHaveLength(1);
    expect(channel.reconnects).toBe(0);
    expect(fake.state.events).toEqual([
      expect.objectContaining({
        outcome: "failed",
        final: true,
        reason:
          "the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)",
      }),
    ]);
    channel.close();
  });

  it("a helper that ended in a Pod that is gone: every later call names the Pod, that it is gone and what to do", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.pod = null;
    fake.helperKilled();
    const message =
      "the sandbox Pod ns/warden-s1 is gone: the API answers 404 (it no longer exists), as a GET of it said after its exec channel ended " +
      "(the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)); what ran in it and its files are lost; " +
      "start a new session, and DELETE this one.";
    for (const text of ["x", "y"])
      await expect(echo(channel, text)).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([
      expect.objectContaining({ outcome: "failed", final: true, error: message }),
    ]);
    channel.close();
  });

  it("a helper that ended as its container ended (kill -TERM 1): the Pod is read again until its status says so, and every call names that", async () => {
    const fake = fakeCluster();
    // A window past the test's timeout: the reads end at the final phase, never because a loaded
    // host's stall used SETTLE's 200 ms up after a read that said Running.
    const channel = await open(fake, undefined, { ...SETTLE, windowMs: 600_000 });
    const running = (await sleeping(fake, channel)).outcome;
    const terminated = { reason: "Completed", exitCode: 0, message: "X" };
    const containerEnded: V1Pod = {
      status: { phase: "Running", containerStatuses: [{ state: { terminated } } as never] },
    };
    const succeeded: V1Pod = {
      status: { phase: "Succeeded", containerStatuses: [{ state: { terminated } } as never] },
    };
    // The kubelet reports the container's end a moment after the helper's stream ended, the phase later.
    fake.state.nextPods = [RUNNING, RUNNING, containerEnded, containerEnded];
    fake.state.pod = succeeded;
    const readsBefore = fake.state.reads;
    fake.helperKilled();
    const message =
      "the sandbox Pod ns/warden-s1 has ended: its phase is Succeeded, its container terminated (reason Completed, exit code 0), as a GET of it said after its exec channel ended " +
      "(the channel's helper in Pod ns/warden-s1 ended (command terminated with non-zero exit code: 137)); " +
      "a container ends when its PID 1 (warden-helper --init) exits (a command in the sandbox can make it: e.g. kill -TERM 1) or is killed (e.g. out of memory); " +
      "this session is over, what ran in it and its files are lost; start a new session, and DELETE this one.";
    expect(await running).toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    for (const text of ["x", "y"])
      await expect(echo(channel, text)).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING", message });
    // Five reads up to Succeeded, final: later calls reuse the verdict.
    expect(fake.state.reads - readsBefore).toBe(5);
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([
      expect.objectContaining({ outcome: "failed", final: true, error: message }),
    ]);
    channel.close();
  });

  it("a Pod still running when the window is over is said to run, and read again by each later call until it ended", async () => {
    // The window, the reads' spacing and the verdict's reuse on fake timers (and performance.now()):
    // a busy machine's stall of the event loop can neither leave the window with too few reads nor
    // outlast the reuse of the verdict.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      const settle = { windowMs: 600, everyMs: 10, reuseMs: 1000 };
      const fake = fakeCluster();
      const channel = await open(fake, undefined, settle);
      const readsBefore = fake.state.reads;
      const started = performance.now();
      fake.helperKilled();
      const stillRuns = { message: expect.stringContaining(") while the Pod still runs: ") };
      const first = expect(echo(channel, "x")).rejects.toMatchObject(stillRuns);
      await vi.advanceTimersByTimeAsync(settle.windowMs);
      await first;
      expect(performance.now() - started).toBeGreaterThanOrEqual(settle.windowMs - 20);
      const reads = fake.state.reads - readsBefore;
      expect(reads).toBeGreaterThan(2);
      expect(reads).toBeLessThanOrEqual(settle.windowMs / settle.everyMs + 1);
      await expect(echo(channel, "y")).rejects.toMatchObject(stillRuns);
      expect(fake.state.reads - readsBefore).toBe(reads); // within reuseMs of the verdict: no GET
      await vi.advanceTimersByTimeAsync(settle.reuseMs);
      await expect(echo(channel, "y")).rejects.toMatchObject(stillRuns);
      expect(fake.state.reads - readsBefore).toBe(reads + 1); // past the window: one GET a call
      fake.state.pod = {
        status: {
          phase: "Failed",
          containerStatuses: [{ state: { terminated: { reason: "OOMKilled", exitCode: 137 } } } as never],
        },
      };
      await vi.advanceTimersByTimeAsync(settle.reuseMs);
      await expect(echo(channel, "z")).rejects.toMatchObject({
        message: expect.stringMatching(
          /^the sandbox Pod ns\/warden-s1 has ended: its phase is Failed, its container terminated \(reason OOMKilled, exit code 137\), as a GET/,
        ),
      });
      expect(fake.sockets).toHaveLength(1);
      channel.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a call cut by the helper's end rejects AbortError as soon as its signal fires, not after the Pod's re-reads", async () => {
    const fake = fakeCluster(); // the Pod keeps reading as running: re-read for the whole window
    // A window past the test's timeout: a call that waited for the re-reads would time the test out.
    const settle = { ...SETTLE, windowMs: 600_000 };
    const channel = await open(fake, undefined, settle);
    const abort = new AbortController();
    const { outcome } = await sleeping(fake, channel, abort.signal);
    const readsBefore = fake.state.reads;
    fake.helperKilled();
    // The channel's end is being settled: the Pod is being read again.
    await expect.poll(() => fake.state.reads).toBeGreaterThan(readsBefore);
    abort.abort();
    const err = await outcome;
    expect(err).toBeInstanceOf(AbortError);
    channel.close();
  });

  it("a GET of the Pod that never answers is given up after podReadTimeoutMs, naming it: no call waits forever", async () => {
    const fake = fakeCluster();
    const channel = await open(fake, 50);
    fake.state.hang = true;
    fake.helperKilled();
    await expect(echo(channel, "x")).rejects.toMatchObject({
      message: expect.stringContaining(
        "and is not re-opened; reading the Pod failed (Kubernetes API request GET /api/v1/namespaces/ns/pods/warden-s1 got no answer within 50 ms (podReadTimeoutMs)); start a new session",
      ),
    });
    channel.close();
  });
});
