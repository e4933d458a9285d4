/**
 * A Kubernetes session outlives its exec stream (src/sandbox/kubernetes/pod-channel.ts):
 * - the stream's TCP connection destroyed by the kernel (`ss -K`): the call that was running gets
 *   an error naming what happened, its process is stopped, the next bash call succeeds over a
 *   re-opened channel, one reconnect, reported to the cluster's onChannelEvent;
 * - a hop that closes connections idle for 4 s (as a streaming server's idle timeout does): an
 *   idle session with the heartbeat keeps its stream well past it, with no reconnect;
 * - a sandbox that holds its helper (a `kill -STOP -1` loop): the session ends, its Pod deleted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ChannelEvent } from "../../src/sandbox/index.js";
import {
  createKubernetesSandbox,
  type KubernetesSandbox,
  podExec,
} from "../../src/sandbox/kubernetes/index.js";
import { createSpillStore, openSession, type Session } from "../../src/session/index.js";
import { builtinTools } from "../../src/tools/index.js";
import type { ToolCall, ToolResultMessage } from "../../src/tools/types.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { describeK8s, podLeftovers, TEST_KUBECONFIG, testCluster } from "../helpers/k8s.js";
import { apiServerOf, cutSocket, type IdleProxy, idleProxy } from "../helpers/stream-cut.js";
import { beating, stillBeating } from "../helpers/survivors.js";

const TENANT = `test-k8s-recover-${process.pid}`;
const bash = (id: string, command: string): ToolCall => ({ id, name: "bash", arguments: { command } });
const text = (r: ToolResultMessage | undefined) => (r?.content[0] as { text?: string } | undefined)?.text;

describeK8s("Kubernetes session: its exec stream cut or idle", () => {
  const events: ChannelEvent[] = [];
  const cluster = { ...testCluster(), onChannelEvent: (e: ChannelEvent) => events.push(e) };
  let sandbox: KubernetesSandbox;
  let session: Session;

  beforeAll(async () => {
    sandbox = await createKubernetesSandbox(
      { tenant: TENANT, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
      cluster,
    );
    session = await openSession(
      { tenant: TENANT },
      {
        createSandbox: async () => sandbox,
        createSpillStore,
        builtinTools,
      },
    );
  });

  afterAll(async () => {
    await session?.close();
    await sandbox?.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("after the kernel destroys the stream's connection, the running call fails saying so and the next bash call succeeds: one reconnect", async () => {
    const pod = sandbox.info.containerId;
    const running = session.runToolCalls([bash("held", `${beating("cut")} & sleep 600`)]);
    expect((await podExec(cluster, pod, ["bash", "-c", "sleep 0.5; test -e /tmp/beat-cut"])).exitCode).toBe(
      0,
    );
    // The connection that carries the stream is the one that receives what a command prints.
    const mib = 4 << 20;
    await cutSocket(apiServerOf(TEST_KUBECONFIG), mib, () =>
      sandbox.exec({ argv: ["head", "-c", String(mib), "/dev/zero"] }, { onStdout: () => {} }),
    );
    const [held] = await running;
    expect(held?.isError).toBe(true);
    expect(text(held)).toBe(
      `the exec stream to Pod ${cluster.namespace}/${pod} ended while this call ran (the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)); ` +
        "what the call started was stopped, and the channel is re-opened for the next call: retry it.",
    );
    const [after] = await session.runToolCalls([bash("after", `echo served; ${stillBeating("cut")}`)]);
    expect(text(after)).toBe("served\ngone\n");
    expect(sandbox.reconnects).toBe(1);
    expect(events.map((e) => [e.outcome, e.reconnects, e.pod])).toEqual([
      ["lost", 0, pod],
      ["reopened", 1, pod],
    ]);
  });
});

describeK8s("Kubernetes session: an idle stream behind a hop with an idle timeout", () => {
  const IDLE_MS = 4000;
  let proxy: IdleProxy;
  let dir: string;
  const sandboxes: KubernetesSandbox[] = [];

  /** A sandbox whose API traffic, exec stream included, goes through the idle-closing proxy. */
  async function behindProxy(heartbeatMs: number): Promise<KubernetesSandbox> {
    const cluster = testCluster(undefined, { kubeconfig: proxy.kubeconfig, heartbeatMs });
    const sandbox = await createKubernetesSandbox(
      { tenant: `${TENANT}-idle`, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
      cluster,
    );
    sandboxes.push(sandbox);
    return sandbox;
  }

  async function echo(sandbox: KubernetesSandbox, what: string): Promise<string> {
    const out: Buffer[] = [];
    const r = await sandbox.exec({ argv: ["echo", what] }, { onStdout: (c) => out.push(c) });
    return `${r.exitCode} ${Buffer.concat(out).toString()}`;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-k8s-idle-"));
    proxy = await idleProxy(TEST_KUBECONFIG, join(dir, "kubeconfig"), IDLE_MS);
  });

  afterAll(async () => {
    for (const sandbox of sandboxes) await sandbox.destroy();
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
    expect(await podLeftovers(`${TENANT}-idle`)).toEqual([]);
  });

  it("with a heartbeat under the idle timeout, an idle session keeps its stream through 3 timeouts: no reconnect", async () => {
    const sandbox = await behindProxy(1000);
    await new Promise((r) => setTimeout(r, 3 * IDLE_MS));
    expect(await echo(sandbox, "still here")).toBe("0 still here\n");
    expect(sandbox.reconnects).toBe(0);
  });

  it("with a heartbeat over it, the hop closes the idle stream, and the channel is re-opened", async () => {
    const sandbox = await behindProxy(3_600_000);
    await new Promise((r) => setTimeout(r, 2 * IDLE_MS));
    expect(await echo(sandbox, "back")).toBe("0 back\n");
    expect(sandbox.reconnects).toBe(1);
  });
});

describeK8s("Kubernetes session: a sandbox that holds its helper", () => {
  const tenant = `${TENANT}-held`;
  afterAll(async () => {
    expect(await podLeftovers(tenant)).toEqual([]);
  });

  // Found by an attack: a `kill -STOP -1` loop stopped each re-opened helper before it could end
  // the old channel's processes, every later call waited ~57 s for 5 attempts, and on gVisor each
  // attempt left a root exec process on the node. Now one silent re-open ends the session.
  it("a kill -STOP -1 loop ends the session: the re-opened helper never answers, its Pod is deleted, every call fails naming it", async () => {
    const events: ChannelEvent[] = [];
    const cluster = {
      ...testCluster(undefined, { heartbeatMs: 1000 }),
      onChannelEvent: (e: ChannelEvent) => events.push(e),
    };
    const sandbox = await createKubernetesSandbox(
      { tenant, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) },
      cluster,
    );
    try {
      const pod = sandbox.info.containerId;
      const where = `${cluster.namespace}/${pod}`;
      const stop =
        "setsid nohup bash -c 'while :; do kill -STOP -1 2>/dev/null; done' >/dev/null 2>&1 & sleep 30";
      const first = await sandbox.exec({ argv: ["bash", "-c", stop] }, { onStdout: () => {} }).then(
        () => "answered",
        (err: Error) => err.message,
      );
      expect(first).toMatch(
        new RegExp(
          `^the exec stream to Pod ${where} ended while this call ran \\(heartbeat: .+\\); what the call started was stopped`,
        ),
      );
      const ended = new RegExp(
        `^the exec channel to Pod ${where} ended \\(heartbeat: .+\\) and the warden-helper started again there did not answer while the Pod ran: a process in the sandbox holds it \\(e\\.g\\. stopping every process with SIGSTOP\\); the Pod was deleted with everything in it; start a new session\\.$`,
      );
      for (const call of ["next", "again"]) {
        const started = Date.now();
        const message = await sandbox.exec({ argv: ["echo", call] }, { onStdout: () => {} }).then(
          () => "answered",
          (err: Error) => err.message,
        );
        expect(message).toMatch(ended);
        if (call === "again") expect(Date.now() - started).toBeLessThan(1000);
      }
      expect(await podLeftovers(tenant)).toEqual([]);
      expect(events.map((e) => [e.outcome, e.final ?? null])).toEqual([
        ["lost", null],
        ["failed", true],
      ]);
    } finally {
      await sandbox.destroy();
    }
  });
});
