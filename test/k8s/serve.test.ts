/**
 * `warden serve` with `backend: { kind: kubernetes }` as a real child process on a real cluster:
 * two tenants kept apart (labels on their Pods, 404 across tenants, the session quota), the seven
 * tools through the HTTP API, a warm pool spare Pod claimed by the next session, and a `kill -9`
 * of the server with a command still running: the restarted server adopts the session on its Pod
 * and removes the idle spare Pod the dead server left, the command is gone, the files are still
 * there, and `--on-exit close` leaves no Pod.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashKey } from "../../src/server/tenancy/auth.js";
import {
  describeK8s,
  podLeftovers,
  TEST_NAMESPACE,
  TEST_SERVE_BACKEND,
  testCluster,
} from "../helpers/k8s.js";
import { bundleCli, type ServeChild, spawnServe, testQuotas } from "../helpers/server-fixture.js";

const A = `test-k8s-a-${randomBytes(3).toString("hex")}`;
const B = `test-k8s-b-${randomBytes(3).toString("hex")}`;
const KEYS: Record<string, string> = { [A]: `key-${A}`, [B]: `key-${B}` };

type Result = { isError: boolean; content: { type: string; text: string }[] };

describeK8s("warden serve on Kubernetes: tenants, tools, pool, kill -9", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];

  const call = (s: ServeChild, tenant: string, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${KEYS[tenant]}`,
        "content-type": "application/json",
        ...init.headers,
      },
    });
  const tool = async (s: ServeChild, tenant: string, id: string, name: string, args: object) => {
    const r = await call(s, tenant, `/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name, arguments: args }] }),
    });
    const body = (await r.json()) as { results: Result[] };
    return body.results[0]!;
  };
  const text = (r: Result) => r.content.map((c) => c.text).join("");
  const newSession = async (s: ServeChild, tenant: string) => {
    const r = await call(s, tenant, "/v1/sessions", { method: "POST", body: "{}" });
    return { status: r.status, body: (await r.json()) as { id: string; containerId?: string } };
  };
  const idleSpares = async (s: ServeChild) => {
    const m = /^warden_pool_idle_sandboxes (\d+)$/m.exec(await (await fetch(`${s.url}/metrics`)).text());
    return Number(m?.[1] ?? 0);
  };
  const starts = async (s: ServeChild, source: string) => {
    const m = new RegExp(`^warden_sandbox_starts_total\\{source="${source}"\\} (\\d+)$`, "m").exec(
      await (await fetch(`${s.url}/metrics`)).text(),
    );
    return Number(m?.[1] ?? 0);
  };

  /**
   * Waits (90 s at most) until tenant A has a running warm pool Pod other than the sessions' Pods
   * `inUse` (a claimed spare keeps its pool label); returns the idle spare Pods of A and B.
   */
  const waitForSpare = async (inUse: string[] = []) => {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const spares = await testCluster().core.listNamespacedPod({
        namespace: TEST_NAMESPACE,
        labelSelector: "io.warden.pool",
      });
      const idle = spares.items
        .filter((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)
        .filter((p) => [A, B].includes(p.metadata?.labels?.["io.warden.tenant"] ?? ""))
        .filter((p) => !inUse.includes(p.metadata?.name ?? ""));
      if (idle.some((p) => p.metadata?.labels?.["io.warden.tenant"] === A)) return idle;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`no running spare Pod of ${A} after 90 s`);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-k8s-serve-"));
    main = await bundleCli();
    config = join(dir, "serve.json");
    const tenant = (id: string, maxSessions: number) => ({
      id,
      keys: [{ id: "k", sha256: hashKey(KEYS[id]!) }],
      quotas: testQuotas(maxSessions),
    });
    await writeFile(
      config,
      JSON.stringify({
        port: 0,
        stateDir: "state",
        warmPool: { size: 1 },
        backend: TEST_SERVE_BACKEND,
        tenants: [tenant(A, 3), tenant(B, 1)],
      }),
    );
    children.push(await spawnServe(main, config));
  });

  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill("SIGKILL");
    const cluster = testCluster();
    const left = [...(await podLeftovers(A)), ...(await podLeftovers(B))];
    for (const p of left)
      await cluster.core
        .deleteNamespacedPod({ name: p.slice(4), namespace: TEST_NAMESPACE, gracePeriodSeconds: 0 })
        .catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    if (main) await rm(dirname(main), { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it("runs the seven tools in a tenant's Pod", async () => {
    const s = children[0]!;
    const { status, body } = await newSession(s, A);
    expect(status).toBe(201);
    const id = body.id;
    expect(await tool(s, A, id, "write", { path: "src/a.txt", content: "one\ntwo\n" })).toMatchObject({
      isError: false,
    });
    expect(text(await tool(s, A, id, "read", { path: "src/a.txt" }))).toBe("one\ntwo\n");
    expect(
      await tool(s, A, id, "edit", { path: "src/a.txt", edits: [{ oldText: "two", newText: "three" }] }),
    ).toMatchObject({ isError: false });
    // The Pod's own uid (src/sandbox/sandbox-uid.ts), never 1000 or root.
    const ran = text(await tool(s, A, id, "bash", { command: "cat src/a.txt; id -u" }));
    expect(ran).toMatch(/^one\nthree\n\d+\n$/);
    expect(Number(ran.split("\n")[2])).toBeGreaterThanOrEqual(2 ** 20);
    expect(text(await tool(s, A, id, "grep", { pattern: "thr" }))).toContain("src/a.txt:2: three");
    expect(text(await tool(s, A, id, "find", { pattern: "*.txt" }))).toContain("src/a.txt");
    expect(text(await tool(s, A, id, "ls", { path: "src" }))).toBe("a.txt");
    await call(s, A, `/v1/sessions/${id}`, { method: "DELETE" });
  });

  it("keeps tenants apart: each tenant's Pods carry its label, other sessions are 404, quotas hold", async () => {
    const s = children[0]!;
    const a = await newSession(s, A);
    const b = await newSession(s, B);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await call(s, B, `/v1/sessions/${a.body.id}`)).status).toBe(404);
    expect((await newSession(s, B)).status).toBe(429);
    expect((await podLeftovers(B)).length).toBeGreaterThanOrEqual(1);
    await call(s, B, `/v1/sessions/${b.body.id}`, { method: "DELETE" });
    await call(s, A, `/v1/sessions/${a.body.id}`, { method: "DELETE" });
  });

  it("claims the next session of a key from the warm pool's spare Pod", async () => {
    const s = children[0]!;
    const before = await starts(s, "pool");
    // The key was seen above: its spare Pod is made in the background. A Running Pod is not yet a
    // spare the pool can hand over (its helper's channel opens after): wait until the server counts
    // every running spare Pod as idle (under CI's load the claim otherwise raced the channel).
    const running = await waitForSpare();
    const deadline = Date.now() + 60_000;
    while ((await idleSpares(s)) < running.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    const { body } = await newSession(s, A);
    expect(await starts(s, "pool")).toBe(before + 1);
    expect(text(await tool(s, A, body.id, "bash", { command: "echo pooled" }))).toBe("pooled\n");
    await call(s, A, `/v1/sessions/${body.id}`, { method: "DELETE" });
  });

  it("after kill -9, the restarted server adopts the session on its Pod and kills what ran", async () => {
    const s = children[0]!;
    const { body } = await newSession(s, A);
    const id = body.id;
    await tool(s, A, id, "write", { path: "kept.txt", content: "still here\n" });
    // A call still running when the server dies.
    void tool(s, A, id, "bash", { command: "sleep 600" }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    // The pool refills after each claim: the dead server leaves its idle spare Pods.
    const idle = await waitForSpare([body.containerId!]);
    s.child.kill("SIGKILL");
    await s.exited;
    const s2 = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(s2);
    // The session adopted; the spares the dead server kept idle are its orphans, removed.
    expect(s2.stderr()).toContain(`warden serve: adopted 1, dropped 0, removed ${idle.length} orphan(s)`);
    expect(text(await tool(s2, A, id, "read", { path: "kept.txt" }))).toBe("still here\n");
    expect(text(await tool(s2, A, id, "bash", { command: "ps -eo comm | grep -c '^sleep' || true" }))).toBe(
      "0\n",
    );
    s2.child.kill("SIGTERM");
    expect(await s2.exited).toBe(0);
    expect([...(await podLeftovers(A)), ...(await podLeftovers(B))]).toEqual([]);
  });
});
