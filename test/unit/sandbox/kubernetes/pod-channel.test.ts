import { describe, expect, it } from "vitest";
import { connectHelper } from "../../../../src/sandbox/kubernetes/index.js";
import { echo, fakeCluster, open, RUNNING, sleep, sleeping } from "./fake-pod-cluster.js";

describe("PodChannel: the exec stream ends under a live session", () => {
  it("re-opens the channel in the background; the next call succeeds; one reconnect", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    expect(await echo(channel, "before")).toBe("before\n");
    fake.cut();
    expect(await echo(channel, "after")).toBe("after\n");
    expect(channel.reconnects).toBe(1);
    expect(fake.sockets).toHaveLength(2);
    expect(fake.state.events.map((e) => [e.outcome, e.reconnects])).toEqual([
      ["lost", 0],
      ["reopened", 1],
    ]);
    expect(fake.state.events[0]?.reason).toBe(
      "the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)",
    );
    channel.close();
  });

  it("a call running when the stream ended rejects at once, naming the Pod and what happened", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    const running = (await sleeping(fake, channel)).outcome;
    fake.cut();
    const err = (await running) as Error & { code?: string };
    expect(err.code).toBe("SANDBOX_ERROR");
    expect(err.message).toBe(
      "the exec stream to Pod ns/warden-s1 ended while this call ran (the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)); " +
        "what the call started was stopped, and the channel is re-opened for the next call: retry it.",
    );
    expect(await echo(channel, "next")).toBe("next\n");
    channel.close();
  });

  it("a Pod that is gone fails every later call naming the Pod, without retrying", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.pod = null;
    fake.cut();
    const message =
      "the sandbox Pod ns/warden-s1 cannot be reached: it no longer exists (its exec channel ended: the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)); start a new session.";
    await expect(echo(channel, "x")).rejects.toThrow(message);
    await expect(echo(channel, "y")).rejects.toThrow(message);
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events.at(-1)).toMatchObject({ outcome: "failed", final: true });
    channel.close();
  });

  it("gives up after the policy's attempts while the API refuses, and the next call tries again", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    fake.state.refuse = true;
    fake.cut();
    await expect(echo(channel, "x")).rejects.toThrow(
      /could not be re-opened in 3 attempts \(last: starting the channel in Pod ns\/warden-s1 failed: connect ECONNREFUSED/,
    );
    fake.state.refuse = false;
    expect(await echo(channel, "back")).toBe("back\n");
    expect(channel.reconnects).toBe(1);
    channel.close();
  });

  it("a close by the session is no loss: no re-open, calls reject SANDBOX_NOT_RUNNING", async () => {
    const fake = fakeCluster();
    const channel = await open(fake);
    channel.close();
    await sleep(20);
    await expect(echo(channel, "x")).rejects.toMatchObject({ code: "SANDBOX_NOT_RUNNING" });
    expect(fake.sockets).toHaveLength(1);
    expect(fake.state.events).toEqual([]);
  });

  it("pings a quiet channel every heartbeatMs; a stream whose pings go unanswered is replaced", async () => {
    const fake = fakeCluster(30);
    const channel = await open(fake);
    const handshake = fake.state.pings[0] ?? 0;
    await expect.poll(() => (fake.state.pings[0] ?? 0) - handshake).toBeGreaterThanOrEqual(3);
    expect(channel.reconnects).toBe(0);
    fake.state.mute = true; // the first stream's helper stops answering (a half-open connection)
    while (channel.reconnects === 0) await sleep(10);
    expect(channel.reconnects).toBe(1);
    expect(fake.state.events[0]).toMatchObject({
      outcome: "lost",
      reason:
        "heartbeat: the helper did not answer a heartbeat ping within 30 ms and sent nothing else meanwhile",
    });
    expect(await echo(channel, "on")).toBe("on\n");
    channel.close();
  });
});

describe("connectHelper: the channel's helper binary", () => {
  it("runs the execute-only copy when its --version answers", async () => {
    const fake = fakeCluster();
    const lines: string[] = [];
    const client = await connectHelper(fake.cluster, "warden-s1", { log: (l) => lines.push(l) });
    client.close();
    expect(fake.state.commands).toEqual([
      ["/usr/local/libexec/warden/warden-helper", "--version"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
    ]);
    expect(lines).toEqual([]);
  });

  it("decides once per Pod: a re-open neither probes again nor falls back when the sandbox would make the probe fail", async () => {
    const fake = fakeCluster();
    (await connectHelper(fake.cluster, "warden-s1")).close();
    fake.state.sealedFails = true; // say, the sandbox used up its pids while the probe would run
    (await connectHelper(fake.cluster, "warden-s1")).close();
    expect(fake.state.commands).toEqual([
      ["/usr/local/libexec/warden/warden-helper", "--version"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
      ["/usr/local/libexec/warden/warden-helper", "--channel"],
    ]);
    expect(fake.state.patches).toEqual([{ metadata: { annotations: { "io.warden.helper": "sealed" } } }]);
  });

  it("chooses nothing when the probe gets no exit status (an API hiccup): the channel is not started", async () => {
    const fake = fakeCluster();
    fake.state.probeBreaks = true;
    await expect(connectHelper(fake.cluster, "warden-s1")).rejects.toThrow(
      "starting the channel in Pod ns/warden-s1 failed: exec in Pod ns/warden-s1 failed: websocket: bad handshake; check that the Pod runs and that the kubeconfig's user may create pods/exec.",
    );
    expect({ commands: fake.state.commands, patches: fake.state.patches }).toEqual({
      commands: [["/usr/local/libexec/warden/warden-helper", "--version"]],
      patches: [],
    });
  });

  it("takes the choice from the Pod's annotation (another replica's, before a restart) without a probe", async () => {
    const fake = fakeCluster();
    fake.state.pod = { ...RUNNING, metadata: { annotations: { "io.warden.helper": "sealed" } } };
    fake.state.sealedFails = true;
    (await connectHelper(fake.cluster, "warden-s1")).close();
    expect(fake.state.commands).toEqual([["/usr/local/libexec/warden/warden-helper", "--channel"]]);
    expect(fake.state.patches).toEqual([]);
  });

  it("runs the readable copy when the runtime refuses the execute-only one, and logs why", async () => {
    const fake = fakeCluster();
    fake.state.sealedFails = true;
    const lines: string[] = [];
    const client = await connectHelper(fake.cluster, "warden-s1", { log: (l) => lines.push(l) });
    client.close();
    expect(fake.state.commands.at(-1)).toEqual(["/usr/local/bin/warden-helper", "--channel"]);
    expect(lines).toEqual([
      "the execute-only helper /usr/local/libexec/warden/warden-helper does not run in Pod ns/warden-s1 (exit -1); the channel runs /usr/local/bin/warden-helper, dumpable until its first prctl (rebuild the image with warden images build; under gVisor this is expected)",
    ]);
  });
});
