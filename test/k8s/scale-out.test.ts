/**
 * Several `warden serve` replicas against one namespace (docs/scale-out.md), as real child
 * processes on a real cluster: each replica labels its Pods with its `backend.replicaId` and
 * reconciles, adopts and pools only those; a second server with a live replica's id stops before
 * reconciling. A second replica's start leaves the first's live
 * session and spare alone and answers 404 for the first's session; `warden gc` leaves live
 * replicas' Pods alone; after `kill -9` the client gets connection errors, and the replica
 * restarted with the same id adopts its session (removing only its own dead spare), while the
 * other replica's Pods stay untouched; the Pods of a replica that never returns survive the other
 * replica's restart (even with a copy of their record in its state) and are removed by gc once
 * expired. A Pod of the same tenant made by the library on another host is no server's to remove.
 */
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  createKubernetesSandbox,
  gcPods,
  replicaLeaseName,
  WARDEN_POD_SELECTOR,
} from "../../src/sandbox/kubernetes/index.js";
import { defaultReplicaId } from "../../src/server/config/index.js";
import { hashKey } from "../../src/server/tenancy/auth.js";
import { describeK8s, podLeftovers, TEST_KUBECONFIG, TEST_NAMESPACE, testCluster } from "../helpers/k8s.js";
import { bundleCli, type ServeChild, spawnServe, testQuotas } from "../helpers/server-fixture.js";

const SUFFIX = randomBytes(3).toString("hex");
const TENANT = `test-k8s-so-${SUFFIX}`;
const KEY = `key-${TENANT}`;
const R1 = `test-r1-${SUFFIX}`;
const R2 = `test-r2-${SUFFIX}`;
/** A config that wrongly reuses R1's replicaId with a state directory of its own. */
const DUP = `test-dup-${SUFFIX}`;

/** The test cluster as a serve backend; each config adds its replicaId. */
const BACKEND = {
  kind: "kubernetes",
  namespace: TEST_NAMESPACE,
  kubeconfig: TEST_KUBECONFIG,
  imagePullPolicy: "Never",
};

type Result = { isError: boolean; content: { type: string; text: string }[] };

describeK8s("several warden serve replicas in one namespace", () => {
  let dir: string;
  let main: string;
  const configs: Record<string, string> = {};
  const children: ServeChild[] = [];
  const cluster = testCluster();

  const call = (s: ServeChild, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });
  const bash = async (s: ServeChild, id: string, command: string) => {
    const r = await call(s, `/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    });
    const body = (await r.json()) as { results: Result[] };
    return body.results[0]!.content.map((c) => c.text).join("");
  };
  const newSession = async (s: ServeChild) => {
    const r = await call(s, "/v1/sessions", { method: "POST", body: "{}" });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string; containerId: string };
  };
  const starts = async (s: ServeChild, source: string) => {
    const m = new RegExp(`^warden_sandbox_starts_total\\{source="${source}"\\} (\\d+)$`, "m").exec(
      await (await fetch(`${s.url}/metrics`)).text(),
    );
    return Number(m?.[1] ?? 0);
  };
  const serve = async (replica: string, args: string[] = []) => {
    const child = await spawnServe(main, configs[replica]!, args);
    children.push(child);
    return child;
  };
  /** The replica's Pods: name, whether a spare, phase, and whether being deleted; sorted by name. */
  const podsOf = async (replica: string) => {
    const list = await cluster.core.listNamespacedPod({
      namespace: TEST_NAMESPACE,
      labelSelector: `${WARDEN_POD_SELECTOR},io.warden.replica=${replica}`,
    });
    return list.items
      .map((p) => ({
        name: p.metadata?.name ?? "",
        spare: p.metadata?.labels?.["io.warden.pool"] !== undefined,
        phase: p.status?.phase,
        deleting: p.metadata?.deletionTimestamp !== undefined,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  };
  const waitSpare = async (replica: string) => {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      if ((await podsOf(replica)).some((p) => p.spare && p.phase === "Running")) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`replica ${replica} made no spare Pod within 90 s`);
  };
  const kill9 = async (s: ServeChild) => {
    s.child.kill("SIGKILL");
    await s.exited;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-k8s-scale-out-"));
    main = await bundleCli();
    for (const [name, replica] of [
      [R1, R1],
      [R2, R2],
      [DUP, R1],
    ] as const) {
      await mkdir(join(dir, name));
      configs[name] = join(dir, name, "serve.json");
      await writeFile(
        configs[name],
        JSON.stringify({
          port: 0,
          stateDir: "state",
          warmPool: { size: 1 },
          backend: { ...BACKEND, replicaId: replica },
          tenants: [{ id: TENANT, keys: [{ id: "k", sha256: hashKey(KEY) }], quotas: testQuotas(2) }],
        }),
      );
    }
  });

  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
    const left = await podLeftovers(TENANT);
    for (const p of left)
      await cluster.core
        .deleteNamespacedPod({ name: p.slice(4), namespace: TEST_NAMESPACE, gracePeriodSeconds: 0 })
        .catch(() => undefined);
    // R1 died holding its Lease (a restart would take it over at once); R2 released its own.
    const leases = [];
    for (const replica of [R1, R2]) {
      const name = replicaLeaseName(replica);
      const lease = await cluster.leases
        .readNamespacedLease({ name, namespace: TEST_NAMESPACE })
        .catch(() => null);
      if (!lease) continue;
      leases.push(replica);
      await cluster.leases.deleteNamespacedLease({ name, namespace: TEST_NAMESPACE });
    }
    await rm(dir, { recursive: true, force: true });
    if (main) await rm(dirname(main), { recursive: true, force: true });
    expect(left).toEqual([]);
    expect(leases).toEqual([R1]);
  });

  let s1: { id: string; containerId: string };
  let s2: { id: string; containerId: string };
  let r1Pods: Awaited<ReturnType<typeof podsOf>>;

  it("a second replica's start leaves the first's session and spare alone; each serves only its own", async () => {
    const r1 = await serve(R1);
    s1 = await newSession(r1);
    expect(await bash(r1, s1.id, "echo kept > kept.txt && cat kept.txt")).toBe("kept\n");
    await waitSpare(R1);
    r1Pods = await podsOf(R1);
    expect(r1Pods.map((p) => `${p.spare ? "spare" : p.name} ${p.phase} ${p.deleting}`).sort()).toEqual(
      [`${s1.containerId} Running false`, "spare Running false"].sort(),
    );
    expect(r1Pods.filter((p) => !p.spare).map((p) => p.name)).toEqual([s1.containerId]);

    // A Pod of the same tenant made by the library on another host: no server's to remove.
    const library = await createKubernetesSandbox(
      { tenant: TENANT, controllerId: "build-host:4242" },
      cluster,
    );
    await using _library = { [Symbol.asyncDispose]: () => library.destroy() };
    // A second server with R1's id stops before reconciling, naming the fix (it waited out one
    // lease duration, 15 s, to see R1 renew its Lease).
    await expect(serve(DUP)).rejects.toThrow(
      `warden serve exited (2):\nwarden: CONFLICT: backend.replicaId '${R1}' is in use in namespace ${TEST_NAMESPACE} by another live warden serve (holder ${defaultReplicaId(join(dir, R1, "state"))}); give this replica its own replicaId (each replica needs a different one).\n`,
    );
    const r2 = await serve(R2);
    expect(r2.stderr()).toMatch(/adopted 0, dropped 0, removed 0 orphan\(s\)/);
    expect(await podsOf(R1)).toEqual(r1Pods);
    expect((await podLeftovers(TENANT)).includes(`pod ${library.info.containerId}`)).toBe(true);
    expect(await bash(r1, s1.id, "cat kept.txt")).toBe("kept\n");
    const other = await call(r2, `/v1/sessions/${s1.id}`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({
      code: "NOT_FOUND",
      message: `Session '${s1.id}' not found. List your sessions with GET /v1/sessions.`,
    });

    // R2's first session of the same key starts cold: R1's spare is not R2's to claim.
    s2 = await newSession(r2);
    expect([await starts(r2, "cold"), await starts(r2, "pool")]).toEqual([1, 0]);
    expect((await podsOf(R2)).filter((p) => !p.spare).map((p) => p.name)).toEqual([s2.containerId]);
    expect(await podsOf(R1)).toEqual(r1Pods);
  });

  it("warden gc leaves the Pods of live replicas alone", async () => {
    await waitSpare(R2);
    const r2Pods = await podsOf(R2);
    expect(r2Pods.length).toBe(2);
    expect(await gcPods(cluster, { tenant: TENANT })).toEqual([]);
    expect(await podsOf(R1)).toEqual(r1Pods);
    expect(await podsOf(R2)).toEqual(r2Pods);
  });

  it("after kill -9, the client's calls fail; the replica restarted with the same id adopts its session and removes only its own spare", async () => {
    const [r1, r2] = children as [ServeChild, ServeChild];
    const running = bash(r1, s1.id, "sleep 600").then(
      () => "answered",
      (e: Error) => `${e.message}: ${(e.cause as NodeJS.ErrnoException).code}`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    await kill9(r1);
    expect(await running).toBe("fetch failed: UND_ERR_SOCKET");
    const refused = await fetch(`${r1.url}/v1/sessions/${s1.id}`).catch((e: Error) => e.cause);
    expect((refused as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    // The dead replica's Pods stay; the other replica goes on serving.
    expect(await podsOf(R1)).toEqual(r1Pods);
    expect(await bash(r2, s2.id, "echo r2")).toBe("r2\n");
    const r2Pods = await podsOf(R2);

    const r1b = await serve(R1);
    expect(r1b.stderr()).toMatch(/adopted 1, dropped 0, removed 1 orphan\(s\)/);
    expect(await podsOf(R1)).toEqual(r1Pods.filter((p) => !p.spare));
    expect(await podsOf(R2)).toEqual(r2Pods);
    expect(await bash(r1b, s1.id, "cat kept.txt; ps -eo comm | grep -c '^sleep' || true")).toBe("kept\n0\n");
  });

  it("a replica that never returns keeps its Pods through the other's restart; gc removes them once expired", async () => {
    const [, r2, r1b] = children as [ServeChild, ServeChild, ServeChild];
    await kill9(r1b);
    await kill9(r2);
    // A record naming R1's Pod in R2's state (a copied stateDir) is dropped, the Pod left to R1.
    const record = (replica: string) => join(dir, replica, "state", "sessions", `${s1.id}.json`);
    await copyFile(record(R1), record(R2));
    const r2b = await serve(R2, ["--on-exit", "close"]);
    expect(r2b.stderr()).toMatch(/adopted 1, dropped 1, removed 1 orphan\(s\)/);
    const left = r1Pods.filter((p) => !p.spare);
    expect(await podsOf(R1)).toEqual(left);
    expect(await gcPods(cluster, { tenant: TENANT })).toEqual([]);

    const pod = await cluster.core.readNamespacedPod({ name: s1.containerId, namespace: TEST_NAMESPACE });
    const expires = new Date(pod.metadata?.annotations?.["io.warden.expires"] ?? "");
    const expected = [
      { kind: "pod", id: s1.containerId, sessionId: s1.id, tenant: TENANT, reason: "expired" },
    ];
    expect(await gcPods(cluster, { tenant: TENANT, now: expires, dryRun: true })).toEqual(expected);
    expect(await gcPods(cluster, { tenant: TENANT, now: expires })).toEqual(expected);
    expect(await podsOf(R1)).toEqual([]);

    expect(await bash(r2b, s2.id, "echo r2")).toBe("r2\n");
    r2b.child.kill("SIGTERM");
    expect(await r2b.exited).toBe(0);
    expect(await podLeftovers(TENANT)).toEqual([]);
  });
});
