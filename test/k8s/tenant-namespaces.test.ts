/**
 * `warden serve` with `backend.tenantNamespaces` on a real cluster: tenant A mapped to its own
 * namespace (`<test namespace>-a`, made here as the cluster administrator would), tenant B in the
 * main one. A's session and spare Pods land in A's namespace and B's in the main one (read back
 * from the API), a session id of one tenant is 404 to the other, `kill -9` and a restart adopt A's
 * session from A's namespace, and nothing is left in either namespace. Also: a mapped namespace
 * that does not exist stops the start naming it (none is created), and warden's Role must be bound
 * in the tenant namespace too (a ServiceAccount bound in the main namespace only is refused, one
 * bound in both runs a session there).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  connectCluster,
  createKubernetesSandbox,
  DENY_ALL_POLICY,
} from "../../src/sandbox/kubernetes/index.js";
import { checkNamespaces, tenantClusters } from "../../src/sandbox/kubernetes/tenant-clusters.js";
import { hashKey } from "../../src/server/tenancy/auth.js";
import {
  describeK8s,
  podLeftovers,
  TEST_KUBECONFIG,
  TEST_NAMESPACE,
  TEST_SERVE_BACKEND,
  tenantPods,
  testCluster,
} from "../helpers/k8s.js";
import { limitedKubeconfig } from "../helpers/k8s-rbac.js";
import { run } from "../helpers/sandbox-fixture.js";
import { bundleCli, type ServeChild, spawnServe, testQuotas } from "../helpers/server-fixture.js";

const NS_A = `${TEST_NAMESPACE}-a`;
const NS_MISSING = `${TEST_NAMESPACE}-missing`;
const suffix = randomBytes(3).toString("hex");
const A = `test-k8s-nsa-${suffix}`;
const B = `test-k8s-nsb-${suffix}`;
const KEYS: Record<string, string> = { [A]: `key-${A}`, [B]: `key-${B}` };

/** Every warden Pod of A and B in both namespaces, as `<namespace>/<name>`. */
async function allPods(): Promise<string[]> {
  const found: string[] = [];
  for (const ns of [TEST_NAMESPACE, NS_A])
    for (const t of [A, B]) found.push(...(await podLeftovers(t, ns)).map((p) => `${ns}/${p.slice(4)}`));
  return found;
}

/** Waits (60 s at most) until namespace `name` is gone (its deletion finished). */
async function namespaceGone(name: string): Promise<void> {
  const { core } = testCluster();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const there = await core.readNamespace({ name }).then(
      () => true,
      (err: { code?: number }) => err.code !== 404,
    );
    if (!there) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`namespace ${name} still there 60 s after its deletion`);
}

describeK8s("warden serve on Kubernetes with a namespace per tenant", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];
  const { core, networking } = testCluster();

  const call = (s: ServeChild, tenant: string, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${KEYS[tenant]}`,
        ...(init.body ? { "content-type": "application/json" } : {}),
      },
    });
  const bash = async (s: ServeChild, tenant: string, id: string, command: string) => {
    const r = await call(s, tenant, `/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    });
    return { status: r.status, text: r.status === 200 ? await r.text() : "" };
  };
  const newSession = async (s: ServeChild, tenant: string) => {
    const r = await call(s, tenant, "/v1/sessions", { method: "POST", body: "{}" });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string; containerId: string };
  };
  const writeConfig = async (name: string, tenantNamespaces: Record<string, string>, stateDir = name) => {
    const tenant = (id: string) => ({
      id,
      keys: [{ id: "k", sha256: hashKey(KEYS[id]!) }],
      quotas: testQuotas(2),
    });
    const file = join(dir, `${name}.json`);
    await writeFile(
      file,
      JSON.stringify({
        port: 0,
        stateDir: `state-${stateDir}`,
        warmPool: { size: 1 },
        backend: { ...TEST_SERVE_BACKEND, tenantNamespaces },
        tenants: [tenant(A), tenant(B)],
      }),
    );
    return file;
  };

  /** Waits (90 s at most) until `tenant` has a running idle spare Pod; returns the spares' namespaces. */
  const waitForSpare = async (tenant: string, inUse: string[]) => {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const where: string[] = [];
      for (const ns of [TEST_NAMESPACE, NS_A]) {
        const pods = await core.listNamespacedPod({
          namespace: ns,
          labelSelector: `io.warden.pool,io.warden.tenant=${tenant}`,
        });
        for (const p of pods.items)
          if (
            p.status?.phase === "Running" &&
            !p.metadata?.deletionTimestamp &&
            !inUse.includes(p.metadata?.name ?? "")
          )
            where.push(ns);
      }
      if (where.length > 0) return where;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`no running spare Pod of ${tenant} after 90 s`);
  };

  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: NS_A } } }).catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
    dir = await mkdtemp(join(tmpdir(), "warden-k8s-tenant-ns-"));
    main = await bundleCli();
    config = await writeConfig("serve", { [A]: NS_A });
    children.push(await spawnServe(main, config));
  });

  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
    const left = await allPods();
    for (const p of left) {
      const [namespace, name] = p.split("/") as [string, string];
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(() => undefined);
    }
    await core.deleteNamespace({ name: NS_A }).catch(() => undefined);
    await namespaceGone(NS_A);
    await rm(dir, { recursive: true, force: true });
    if (main) await rm(dirname(main), { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it("puts each tenant's session Pod in its namespace, with the deny-all NetworkPolicy, and keeps session ids apart (404)", async () => {
    const s = children[0]!;
    const a = await newSession(s, A);
    const b = await newSession(s, B);
    expect((await tenantPods(A, NS_A)).map((p) => p.id)).toContain(a.containerId);
    expect((await tenantPods(B, TEST_NAMESPACE)).map((p) => p.id)).toContain(b.containerId);
    expect(await podLeftovers(A, TEST_NAMESPACE)).toEqual([]);
    expect(await podLeftovers(B, NS_A)).toEqual([]);
    const policy = await networking.readNamespacedNetworkPolicy({ name: DENY_ALL_POLICY, namespace: NS_A });
    expect(policy.spec?.policyTypes).toEqual(["Ingress", "Egress"]);
    // A session id reaches its own tenant's Pod only: every other tenant gets 404.
    expect((await call(s, B, `/v1/sessions/${a.id}`)).status).toBe(404);
    expect((await bash(s, B, a.id, "echo no")).status).toBe(404);
    expect((await call(s, A, `/v1/sessions/${b.id}`)).status).toBe(404);
    expect((await bash(s, A, b.id, "echo no")).status).toBe(404);
    expect((await call(s, B, `/v1/sessions/${a.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await tenantPods(A, NS_A)).map((p) => p.id)).toContain(a.containerId);
    expect((await bash(s, A, a.id, "echo mine")).text).toContain("mine\\n");
    for (const [t, id] of [
      [A, a.id],
      [B, b.id],
    ] as const)
      expect((await call(s, t, `/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("makes each tenant's warm pool spares in its namespace", async () => {
    // Both keys were seen above: their spares are made in the background.
    expect(await waitForSpare(A, [])).toEqual([NS_A]);
    expect(await waitForSpare(B, [])).toEqual([TEST_NAMESPACE]);
  });

  it("after kill -9, a restart adopts the mapped tenant's session from its namespace, and drops one whose tenant moved (its Pod removed); --on-exit close leaves no Pod", async () => {
    const s = children[0]!;
    const a = await newSession(s, A);
    const b = await newSession(s, B);
    expect((await bash(s, A, a.id, "echo kept > kept.txt")).status).toBe(200);
    const spares = [...(await waitForSpare(A, [a.containerId])), ...(await waitForSpare(B, [b.containerId]))];
    s.child.kill("SIGKILL");
    await s.exited;
    // The same state directory, with B now mapped to A's namespace too: B's Pod in the main
    // namespace is not where B's sessions live any more.
    const moved = await writeConfig("moved", { [A]: NS_A, [B]: NS_A }, "serve");
    const s2 = await spawnServe(main, moved, ["--on-exit", "close"]);
    children.push(s2);
    expect(s2.stderr()).toContain(`warden serve: adopted 1, dropped 1, removed ${spares.length} orphan(s)`);
    expect((await tenantPods(A, NS_A)).map((p) => p.id)).toEqual([a.containerId]);
    expect(await podLeftovers(B, TEST_NAMESPACE)).toEqual([]);
    expect((await call(s2, B, `/v1/sessions/${b.id}`)).status).toBe(404);
    expect((await bash(s2, A, a.id, "cat kept.txt")).text).toContain("kept\\n");
    expect((await bash(s2, B, a.id, "cat kept.txt")).status).toBe(404);
    s2.child.kill("SIGTERM");
    expect(await s2.exited).toBe(0);
    expect(await allPods()).toEqual([]);
  });

  it("refuses to start when a tenant's namespace does not exist, naming it, and creates none", async () => {
    const missing = await writeConfig("missing", { [A]: NS_MISSING });
    const failed = await spawnServe(main, missing).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(failed).toContain(
      `warden: NOT_FOUND: namespace ${NS_MISSING} (backend.tenantNamespaces, tenant(s) '${A}') does not exist; warden never creates namespaces: have the cluster administrator create it and bind warden's Role`,
    );
    await expect(core.readNamespace({ name: NS_MISSING })).rejects.toMatchObject({ code: 404 });
  });

  it("needs warden's Role bound in the tenant namespace too: refused naming the binding without it, a session runs with it", async () => {
    const rules = [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "create", "delete", "patch"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["create", "get"] },
      {
        apiGroups: ["networking.k8s.io"],
        resources: ["networkpolicies"],
        verbs: ["get", "create", "update"],
      },
    ];
    const mainOnly = await limitedKubeconfig("warden-test-main-only", rules);
    const both = await limitedKubeconfig("warden-test-both", rules, [NS_A]);
    try {
      const clustersOf = (kubeconfig: string) =>
        tenantClusters(
          {
            ...connectCluster({ namespace: TEST_NAMESPACE, kubeconfig, imagePullPolicy: "Never" }),
            replicaId: "r",
          },
          { [A]: NS_A },
        );
      await expect(checkNamespaces(clustersOf(mainOnly.kubeconfig), { [A]: NS_A })).rejects.toThrow(
        `listing Pods in namespace ${NS_A} (backend.tenantNamespaces, tenant(s) '${A}'): refused by the API server (403`,
      );
      const clusters = clustersOf(both.kubeconfig);
      await checkNamespaces(clusters, { [A]: NS_A });
      const sandbox = await createKubernetesSandbox({ tenant: A }, clusters.of(A));
      try {
        expect(await run(sandbox, "echo served")).toMatchObject({ exitCode: 0, stdout: "served\n" });
        expect((await tenantPods(A, NS_A)).map((p) => p.id)).toEqual([sandbox.info.containerId]);
      } finally {
        await sandbox.destroy();
      }
    } finally {
      await mainOnly.remove();
      await both.remove();
    }
  });

  it("warden gc sweeps each namespace given by a repeated --namespace", async () => {
    const made = [];
    for (const namespace of [TEST_NAMESPACE, NS_A])
      made.push(await createKubernetesSandbox({ tenant: A, ttlMs: 1000 }, { ...testCluster(), namespace }));
    await new Promise((r) => setTimeout(r, 1500));
    const gc = await promisify(execFile)(process.execPath, [
      main,
      "gc",
      "--tenant",
      A,
      "--namespace",
      TEST_NAMESPACE,
      "--namespace",
      NS_A,
      "--kubeconfig",
      TEST_KUBECONFIG,
    ]);
    expect(gc.stdout.trim().split("\n")).toEqual([
      ...made.map(
        (m) => `removed pod ${m.info.containerId} session=${m.info.sessionId} tenant=${A} (expired)`,
      ),
      "2 resource(s) removed",
    ]);
    expect(await allPods()).toEqual([]);
  });
});
