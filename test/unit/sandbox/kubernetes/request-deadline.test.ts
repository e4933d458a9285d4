/**
 * Every request of the generated API clients (connectCluster: core, networking, leases) has a
 * deadline, backend.requestTimeoutMs, set once on the clients (request-deadline.ts). Over real HTTP:
 * an API server on 127.0.0.1 that takes the connection and never answers in namespace `hung`,
 * answers after 300 ms in namespace `slow`, and in `stall` sends the headers but not the body.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ObservableMiddleware, RequestContext, V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SandboxError } from "../../../../src/errors.js";
import { kubernetesClient } from "../../../../src/sandbox/kubernetes/client.js";
import { readPodWithin } from "../../../../src/sandbox/kubernetes/cluster.js";
import {
  apiStatus,
  connectCluster,
  execChannel,
  fromKubeError,
  loadKubernetesClient,
} from "../../../../src/sandbox/kubernetes/index.js";
import { requestDeadline } from "../../../../src/sandbox/kubernetes/request-deadline.js";

await loadKubernetesClient();

const POD: V1Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "slow" } };
/** Every request the server got: method, path and Content-Type; and the Authorization headers. */
const seen: Array<[string, string, string | undefined]> = [];
const authorizations = new Set<string | undefined>();
let server: Server;
let dir: string;
let kubeconfig: string;

function answer(req: IncomingMessage, res: import("node:http").ServerResponse): void {
  req.resume();
  req.on("end", () => {
    seen.push([req.method ?? "", req.url ?? "", req.headers["content-type"]]);
    authorizations.add(req.headers.authorization);
    const namespace = /\/namespaces\/([^/]+)/.exec(req.url ?? "")?.[1];
    if (namespace === "hung") return; // the connection stays open, unanswered
    res.writeHead(200, { "content-type": "application/json" });
    if (namespace === "stall") return void res.write('{"kind":"Pod",');
    setTimeout(() => res.end(JSON.stringify(POD)), 300);
  });
}

/** A kubeconfig user whose exec plugin answers only after 3 s (a credential step that hangs). */
const HUNG_PLUGIN_USER =
  'user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: sleep, args: ["3"]}}';

/** pods/exec upgrades and proxy CONNECTs the server took and never answered (closed at the end). */
const upgrades: Socket[] = [];

beforeAll(async () => {
  server = createServer(answer);
  server.on("upgrade", (_req, socket: Socket) => void upgrades.push(socket));
  server.on("connect", (_req, socket: Socket) => void upgrades.push(socket)); // a proxy that never answers
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  dir = mkdtempSync(join(tmpdir(), "warden-deadline-"));
  kubeconfig = join(dir, "kubeconfig");
  // Plain HTTP: client-node allows it only with insecure-skip-tls-verify.
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
      "users: [{name: u, user: {token: t}}]",
      "contexts: [{name: x, context: {cluster: c, user: u}}]",
      "current-context: x",
    ].join("\n"),
  );
});

afterAll(() => {
  for (const socket of upgrades) socket.destroy();
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const connect = (requestTimeoutMs?: number) =>
  connectCluster({ namespace: "hung", kubeconfig, ...(requestTimeoutMs ? { requestTimeoutMs } : {}) });

/** How `call` rejects, and after how many ms. */
async function failure(call: () => Promise<unknown>): Promise<{ err: Error; ms: number }> {
  const started = performance.now();
  const err = await call().then(
    () => new Error("answered"),
    (e: Error) => e,
  );
  return { err, ms: performance.now() - started };
}

/**
 * `call`'s answer from namespace `slow` on fake timers: once the server got the request, its 300 ms
 * (and no more) pass, so a deadline longer than that cannot fire however busy the machine is.
 */
async function answeredAfter300<T>(call: () => Promise<T>): Promise<T> {
  const before = seen.length;
  const answer = call();
  await expect.poll(() => seen.length).toBe(before + 1);
  await vi.advanceTimersByTimeAsync(300);
  return answer;
}

const late = (method: string, path: string, ms = 1000) =>
  `Kubernetes API request ${method} ${path} got no answer within ${ms} ms (backend.requestTimeoutMs)`;

describe("backend.requestTimeoutMs: every API request has a deadline", () => {
  it("a GET, a list, a create, a delete and a merge patch (Pods, NetworkPolicies, Leases) that get no answer fail after it, naming the request", async () => {
    const cluster = connect(1000);
    const namespace = "hung";
    const calls: Array<[() => Promise<unknown>, string, string]> = [
      [
        () => cluster.core.readNamespacedPod({ name: "p", namespace }),
        "GET",
        "/api/v1/namespaces/hung/pods/p",
      ],
      [
        () => cluster.core.createNamespacedPod({ namespace, body: POD }),
        "POST",
        "/api/v1/namespaces/hung/pods",
      ],
      [
        () => cluster.core.deleteNamespacedPod({ name: "p", namespace }),
        "DELETE",
        "/api/v1/namespaces/hung/pods/p",
      ],
      [
        () => cluster.core.patchNamespacedPod({ name: "p", namespace, body: {} }, cluster.mergePatch),
        "PATCH",
        "/api/v1/namespaces/hung/pods/p",
      ],
      [() => cluster.core.listNamespacedPod({ namespace }), "GET", "/api/v1/namespaces/hung/pods"],
      [
        () => cluster.networking.readNamespacedNetworkPolicy({ name: "n", namespace }),
        "GET",
        "/apis/networking.k8s.io/v1/namespaces/hung/networkpolicies/n",
      ],
      [
        () => cluster.leases.readNamespacedLease({ name: "l", namespace }),
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/hung/leases/l",
      ],
    ];
    const outcomes = await Promise.all(calls.map(([call]) => failure(call)));
    for (const [i, { err, ms }] of outcomes.entries()) {
      const [, method, path] = calls[i]!;
      expect(err.message).toBe(late(method, path));
      expect(ms).toBeGreaterThanOrEqual(950); // timers start from the loop's cached time
    }
    // The merge patch kept its Content-Type: the per-call options add to the clients' deadline.
    expect(seen).toContainEqual(["PATCH", "/api/v1/namespaces/hung/pods/p", "application/merge-patch+json"]);
  });

  it("is no 404 to the callers' checks, and fromKubeError makes it a SandboxError with the message", async () => {
    const cluster = connect(1000);
    const { err } = await failure(() => cluster.core.readNamespacedPod({ name: "q", namespace: "hung" }));
    expect([err.name, apiStatus(err)]).toEqual(["KubernetesRequestTimeoutError", undefined]);
    const mapped = fromKubeError(err, "reading Pod hung/q");
    expect(mapped).toBeInstanceOf(SandboxError);
    expect(mapped.message).toBe(
      `reading Pod hung/q failed: ${late("GET", "/api/v1/namespaces/hung/pods/q")}`,
    );
  });

  it("bounds a body that never ends too", async () => {
    const cluster = connect(1000);
    const { err } = await failure(() => cluster.core.readNamespacedPod({ name: "p", namespace: "stall" }));
    expect(err.message).toBe(late("GET", "/api/v1/namespaces/stall/pods/p"));
  });

  it("lets a request answered in time through, merge patches included", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const cluster = connect(1000);
      const read = await answeredAfter300(() =>
        cluster.core.readNamespacedPod({ name: "p", namespace: "slow" }),
      );
      const patched = await answeredAfter300(() =>
        cluster.core.patchNamespacedPod(
          { name: "p", namespace: "slow", body: { metadata: { annotations: { a: "b" } } } },
          cluster.mergePatch,
        ),
      );
      expect([read.metadata?.name, patched.metadata?.name]).toEqual(["p", "p"]);
      expect(seen).toContainEqual([
        "PATCH",
        "/api/v1/namespaces/slow/pods/p",
        "application/merge-patch+json",
      ]);
      // The kubeconfig's credentials still go with every request.
      expect([...authorizations]).toEqual(["Bearer t"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("readPodWithin's own shorter bound, or the clients' when earlier, gives up a GET of the Pod", async () => {
    const cluster = connect(1000);
    const own = await failure(() => readPodWithin(cluster, "p", 300));
    expect(own.err.message).toBe(
      "Kubernetes API request GET /api/v1/namespaces/hung/pods/p got no answer within 300 ms (podReadTimeoutMs)",
    );
    const clients = await failure(() => readPodWithin(cluster, "p", 4000));
    expect(clients.err.message).toBe(late("GET", "/api/v1/namespaces/hung/pods/p"));
  });

  it("stops a request's deadline timers once it is answered: nothing aborts it later", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const cluster = connectCluster({ namespace: "slow", kubeconfig, requestTimeoutMs: 1000 });
      const { Observable } = kubernetesClient();
      let request: RequestContext | undefined;
      const capture: ObservableMiddleware = {
        pre: (context) => {
          request = context;
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      };
      const own = requestDeadline(500, "podReadTimeoutMs");
      const pod = await answeredAfter300(() =>
        cluster.core.readNamespacedPod(
          { name: "p", namespace: "slow" },
          { middleware: [...(own.middleware ?? []), capture], middlewareMergeStrategy: "append" },
        ),
      );
      expect(pod.metadata?.name).toBe("p");
      await vi.advanceTimersByTimeAsync(1200); // past both the call's 500 ms and the clients' 1000 ms
      expect(request?.getSignal()?.aborted).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("bounds the kubeconfig's credential step (an exec plugin that never answers) by it too", async () => {
    const hungPlugin = join(dir, "kubeconfig-exec");
    writeFileSync(hungPlugin, readFileSync(kubeconfig, "utf8").replace("user: {token: t}", HUNG_PLUGIN_USER));
    const cluster = connectCluster({ namespace: "slow", kubeconfig: hungPlugin, requestTimeoutMs: 1000 });
    const before = seen.length;
    const { err } = await failure(() => cluster.core.readNamespacedPod({ name: "p", namespace: "slow" }));
    expect(err.message).toBe(
      "Kubernetes API request GET /api/v1/namespaces/slow/pods/p was not sent: the kubeconfig's credentials (an exec plugin or a token refresh) were not ready within 1000 ms (backend.requestTimeoutMs)",
    );
    expect([err.name, apiStatus(err)]).toEqual(["KubernetesRequestCredentialsTimeoutError", undefined]);
    expect(seen.length).toBe(before);
  });

  it("bounds the opening of a pods/exec stream (a session's channel) that the API server never answers", async () => {
    const cluster = connect(1000);
    const { err, ms } = await failure(() =>
      execChannel(cluster.exec, "hung", "p", { command: ["warden-helper", "--channel"] }),
    );
    expect(err.message).toBe(
      "starting the channel in Pod hung/p failed: the API server did not open the exec stream (pods/exec) within 1000 ms (backend.requestTimeoutMs); check that the Pod runs and that the kubeconfig's user may create pods/exec.",
    );
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(upgrades.length).toBeGreaterThanOrEqual(1);
  });

  it("bounds it through a proxy (the kubeconfig's proxy-url) and the credential step before it too", async () => {
    const base = readFileSync(kubeconfig, "utf8");
    const variants: Array<[string, string, string]> = [
      [
        "proxy",
        base.replace(
          "insecure-skip-tls-verify: true",
          `insecure-skip-tls-verify: true, proxy-url: "${base.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0]}"`,
        ),
        "the API server did not open the exec stream (pods/exec) within 1000 ms (backend.requestTimeoutMs)",
      ],
      [
        "exec",
        base.replace("user: {token: t}", HUNG_PLUGIN_USER),
        "the kubeconfig's credentials (an exec plugin or a token refresh) were not ready within 1000 ms (backend.requestTimeoutMs), so the exec stream (pods/exec) was not opened",
      ],
    ];
    for (const [name, text, why] of variants) {
      const file = join(dir, `kubeconfig-${name}`);
      writeFileSync(file, text);
      const cluster = connectCluster({ namespace: "hung", kubeconfig: file, requestTimeoutMs: 1000 });
      const { err } = await failure(() =>
        execChannel(cluster.exec, "hung", "p", { command: ["warden-helper", "--channel"] }),
      );
      expect(err.message).toBe(
        `starting the channel in Pod hung/p failed: ${why}; check that the Pod runs and that the kubeconfig's user may create pods/exec.`,
      );
    }
  });

  it("is 30000 ms when absent", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const before = seen.length;
      const outcome = failure(() => connect().core.readNamespacedPod({ name: "d", namespace: "hung" }));
      // The request is on the wire (the deadline starts before it is sent).
      while (seen.length === before) await new Promise((r) => setImmediate(r));
      await vi.advanceTimersByTimeAsync(29_999);
      let settled = false;
      void outcome.then(() => (settled = true));
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect((await outcome).err.message).toBe(late("GET", "/api/v1/namespaces/hung/pods/d", 30_000));
    } finally {
      vi.useRealTimers();
    }
  });
});
