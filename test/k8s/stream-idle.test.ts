/**
 * The channel heartbeat against containerd's own `stream_idle_timeout` (T, read from the node:
 * test/helpers/stream-idle.ts; this project's node sets 90 s), all sessions at once so the suite
 * costs about one T:
 * - on the exec path containerd sees (a v4.channel.k8s.io WebSocket, proxied to containerd
 *   unchanged: clusters before Kubernetes 1.30 or without TranslateStreamCloseWebsocketRequests),
 *   a session with the default heartbeat (60 s) stays idle past T and answers with no reconnect;
 *   a control with a 1 h heartbeat is cut by containerd T after its last traffic and re-opened
 *   once; a silent `sleep` longer than T ends with its own exit code; a warm-pool spare idle past
 *   T is claimed (not replaced by a cold Pod) and its first call answers with no reconnect, while a
 *   spare with a 1 h heartbeat is cut and the claim creates a cold Pod instead;
 * - on the default path (v5: the API server turns it into SPDY and pings every 5 s) containerd
 *   never sees the stream idle, so even a 1 h heartbeat gets no reconnect.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ChannelEvent, Sandbox } from "../../src/sandbox/index.js";
import { type ClaimResult, type PoolRequest, WarmPool } from "../../src/sandbox/index.js";
import {
  createKubernetesSandbox,
  type KubernetesCluster,
  type KubernetesSandbox,
  kubernetesPoolBackend,
  type PreparedPod,
} from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, podLeftovers, removePods, tenantPods, testCluster } from "../helpers/k8s.js";
import { legacyExec, nodeStreamIdleTimeoutMs } from "../helpers/stream-idle.js";

const TENANT = `test-k8s-idle-${process.pid}`;
const HOUR = 3_600_000;

/** `echo what` in `sandbox`: "<exit code> <stdout>". */
async function echo(sandbox: Sandbox, what: string): Promise<string> {
  const out: Buffer[] = [];
  const r = await sandbox.exec({ argv: ["echo", what] }, { onStdout: (c) => out.push(c) });
  return `${r.exitCode} ${Buffer.concat(out).toString()}`;
}

describeK8s("Kubernetes session: idle longer than containerd's stream_idle_timeout", () => {
  const timeoutMs = nodeStreamIdleTimeoutMs();
  const legacy = legacyExec();
  const sandboxes: Sandbox[] = [];
  const pools: WarmPool<PoolRequest, PreparedPod>[] = [];
  const lost = new Map<string, { at: number; reason: string }[]>();

  /** The test cluster for `name` (a tenant suffix): v4 exec unless `v5`, events of its Pods kept by name. */
  function clusterFor(name: string, heartbeatMs?: number, v5 = false): KubernetesCluster {
    const events: { at: number; reason: string }[] = [];
    lost.set(name, events);
    const onChannelEvent = (e: ChannelEvent) => {
      if (e.outcome === "lost") events.push({ at: performance.now(), reason: e.reason });
    };
    const base = testCluster(undefined, heartbeatMs === undefined ? {} : { heartbeatMs });
    return { ...base, ...(v5 ? {} : { exec: legacy }), onChannelEvent };
  }

  /** A session of its own tenant; resolves with it and when it was ready (its last stream traffic). */
  async function session(name: string, heartbeatMs?: number, v5 = false) {
    const sandbox = await createKubernetesSandbox(
      { tenant: `${TENANT}-${name}` },
      clusterFor(name, heartbeatMs, v5),
    );
    sandboxes.push(sandbox);
    return { sandbox, readyAt: performance.now() };
  }

  /** A warm pool of one spare of its own tenant; resolves with the pool, its request and the spare's name. */
  async function spare(name: string, heartbeatMs?: number) {
    const pool = new WarmPool<PoolRequest, PreparedPod>({
      backend: kubernetesPoolBackend({ cluster: clusterFor(name, heartbeatMs) }),
      size: 1,
    });
    pools.push(pool);
    const request: PoolRequest = { template: { tenant: `${TENANT}-${name}` } };
    await pool.warm(request);
    await pool.settled();
    const [pod] = await tenantPods(`${TENANT}-${name}`);
    return { pool, request, pod: pod?.id ?? "", readyAt: performance.now() };
  }

  let beating: Awaited<ReturnType<typeof session>>;
  let control: Awaited<ReturnType<typeof session>>;
  let translated: Awaited<ReturnType<typeof session>>;
  let silent: { sandbox: KubernetesSandbox; result: Promise<{ exitCode: number; ms: number }> };
  let spares: { beating: Awaited<ReturnType<typeof spare>>; control: Awaited<ReturnType<typeof spare>> };
  const sleepS = Math.ceil(timeoutMs / 1000) + 10;

  beforeAll(async () => {
    expect(timeoutMs, "this suite waits longer than the node's timeout: keep it at most 5 min").toBeLessThan(
      5 * 60_000,
    );
    const silentSession = session("silent");
    [beating, control, translated, spares] = await Promise.all([
      session("beating"),
      session("control", HOUR),
      session("v5", HOUR, true),
      Promise.all([spare("spare"), spare("spare-control", HOUR)]).then(([b, c]) => ({
        beating: b,
        control: c,
      })),
      silentSession.then(({ sandbox }) => {
        const started = performance.now();
        const result = sandbox
          .exec({ argv: ["bash", "-c", `sleep ${sleepS}; exit 7`] }, { onStdout: () => {} })
          .then((r) => ({ exitCode: r.exitCode, ms: performance.now() - started }));
        result.catch(() => {}); // awaited by its test
        silent = { sandbox, result };
      }),
    ]);
    // Everything idles (or sleeps) past the node's timeout once, together.
    const ready = [beating, control, translated, spares.beating, spares.control].map((s) => s.readyAt);
    const idleUntil = Math.max(...ready) + timeoutMs + 10_000;
    await new Promise((r) => setTimeout(r, idleUntil - performance.now()));
  }, 600_000);

  afterAll(async () => {
    for (const sandbox of sandboxes) await sandbox.destroy();
    for (const pool of pools) await pool.drain();
    for (const name of lost.keys()) {
      await removePods(`${TENANT}-${name}`);
      expect(await podLeftovers(`${TENANT}-${name}`)).toEqual([]);
    }
  }, 120_000);

  it("with the default heartbeat (60 s), an idle session keeps its stream past the timeout: no reconnect", async () => {
    expect(await echo(beating.sandbox, "still here")).toBe("0 still here\n");
    expect(beating.sandbox.reconnects).toBe(0);
    expect(lost.get("beating")).toEqual([]);
    await beating.sandbox.destroy(); // each test frees its Pods: the node is shared
  });

  it("with a 1 h heartbeat, containerd closes the idle stream the timeout after its last traffic, and the channel is re-opened once", async () => {
    const [cut, ...more] = lost.get("control") ?? [];
    expect(more).toEqual([]);
    expect(cut?.reason).toBe(
      "the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost)",
    );
    // The last traffic was the handshake, just before the sandbox was ready.
    const afterReady = (cut?.at ?? 0) - control.readyAt;
    expect(afterReady).toBeGreaterThan(timeoutMs - 2000);
    expect(afterReady).toBeLessThan(timeoutMs + 3000);
    expect(await echo(control.sandbox, "back")).toBe("0 back\n");
    expect(control.sandbox.reconnects).toBe(1);
    await control.sandbox.destroy();
  });

  it(`a silent call longer than the timeout (sleep) ends with its own exit code: no reconnect`, async () => {
    const { exitCode, ms } = await silent.result;
    expect(exitCode).toBe(7);
    expect(ms).toBeGreaterThan(sleepS * 1000 - 1000);
    expect(silent.sandbox.reconnects).toBe(0);
    expect(lost.get("silent")).toEqual([]);
    await silent.sandbox.destroy();
  });

  it("a warm-pool spare idle past the timeout is claimed and its first call answers: no reconnect", async () => {
    const claim: ClaimResult = await spares.beating.pool.claim(spares.beating.request);
    sandboxes.push(claim.sandbox);
    expect([claim.pooled, claim.sandbox.info.containerId]).toEqual([true, spares.beating.pod]);
    expect(await echo(claim.sandbox, "claimed")).toBe("0 claimed\n");
    expect((claim.sandbox as KubernetesSandbox).reconnects).toBe(0);
    expect(lost.get("spare")).toEqual([]);
    await claim.sandbox.destroy();
  });

  it("a spare with a 1 h heartbeat is cut by containerd: the claim creates a cold Pod instead, whose first call answers", async () => {
    const claim = await spares.control.pool.claim(spares.control.request);
    sandboxes.push(claim.sandbox);
    expect(claim.pooled).toBe(false);
    expect(claim.sandbox.info.containerId).not.toBe(spares.control.pod);
    expect(await echo(claim.sandbox, "cold")).toBe("0 cold\n");
    await claim.sandbox.destroy();
  });

  it("on the default (v5) path the API server pings containerd's side every 5 s: even a 1 h heartbeat gets no cut", async () => {
    expect(await echo(translated.sandbox, "translated")).toBe("0 translated\n");
    expect(translated.sandbox.reconnects).toBe(0);
    expect(lost.get("v5")).toEqual([]);
  });
});
