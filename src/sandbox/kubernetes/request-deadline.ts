/**
 * A deadline on every request of the generated API clients (CoreV1Api, NetworkingV1Api,
 * CoordinationV1Api). @kubernetes/client-node sets none, and neither does node-fetch under it: an API
 * server that takes the connection and never answers would hold a session create, a delete, a
 * Lease renewal forever. (kube-apiserver's own `--request-timeout`, default 60 s, bounds only the
 * requests it is handling, not a server or proxy that went silent.)
 *
 * The clients' HTTP library (client-node's Configuration `httpApi`, kept by every per-call option
 * that does not replace it, merge patches' `setHeaderOptions` included) gives each request an
 * AbortSignal that fires after the limit (node-fetch then cuts the connection, body included) and
 * turns the abort into a KubernetesRequestTimeoutError; the kubeconfig's credential step before it
 * (an exec plugin, a token refresh) is bounded by the same limit. A call may ask for a shorter limit with
 * requestDeadline (a client-node middleware); the earlier deadline wins. pods/exec (the Exec class,
 * a long-lived WebSocket) does not use these clients: boundedExec bounds its opening handshake by
 * the same limit, and the open stream has none. No warden call watches or follows a log.
 */

import { createRequire } from "node:module";
import type {
  Configuration,
  ConfigurationOptions,
  KubeConfig,
  ObservableMiddleware,
  PromiseHttpLibrary,
  RequestContext,
  ResponseContext,
  SecurityAuthentication,
} from "@kubernetes/client-node";
import type { ClientOptions, WebSocket } from "ws";
import { InvalidArgumentError } from "../../errors.js";
import { type KubernetesClient, kubernetesClient } from "./client.js";

/** Default of backend.requestTimeoutMs (ms): half kube-apiserver's own 60 s request timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Bounds of backend.requestTimeoutMs: 1 s to 10 min. */
export const REQUEST_TIMEOUT_MS_RANGE = { min: 1000, max: 600_000 } as const;

/** The abort reason of a request whose deadline passed: the limit and the setting that gave it. */
class DeadlinePassed extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly limit: string,
  ) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/**
 * A request of the API clients that got no (complete) answer within its deadline. `method` (GET,
 * POST, ...) and `path` (the URL's path, no query) name the API operation, `timeoutMs` is the limit
 * and `limit` the setting it came from (backend.requestTimeoutMs, or a call's own, e.g.
 * podReadTimeoutMs). It has no numeric `code`, so apiStatus() is undefined: no caller takes it for a
 * 404 or a conflict; fromKubeError makes it a SandboxError with this message.
 */
export class KubernetesRequestTimeoutError extends Error {
  override readonly name = "KubernetesRequestTimeoutError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly timeoutMs: number,
    readonly limit: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Kubernetes API request ${method} ${path} got no answer within ${timeoutMs} ms (${limit})`,
      options,
    );
  }
}

/**
 * The kubeconfig's credentials for a request (an exec plugin, a token refresh) were not ready within
 * backend.requestTimeoutMs; the request was not sent. Like KubernetesRequestTimeoutError it has no
 * numeric `code`.
 */
export class KubernetesRequestCredentialsTimeoutError extends Error {
  override readonly name = "KubernetesRequestCredentialsTimeoutError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Kubernetes API request ${method} ${path} was not sent: the kubeconfig's credentials (an exec plugin or a token refresh) were not ready within ${timeoutMs} ms (backend.requestTimeoutMs)`,
    );
  }
}

/** The timers of each request's deadlines, stopped together once its answer is read. */
const deadlineTimers = new WeakMap<RequestContext, NodeJS.Timeout[]>();

/**
 * Aborts `request` after `timeoutMs` unless an earlier deadline of its own does first; returns the
 * function that stops this and every other deadline timer of `request` (once the answer's body is
 * read, or the request failed), so no timer outlives its request.
 */
function addDeadline(request: RequestContext, timeoutMs: number, limit: string): () => void {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeadlinePassed(timeoutMs, limit)), timeoutMs);
  timer.unref();
  const timers = deadlineTimers.get(request) ?? [];
  timers.push(timer);
  deadlineTimers.set(request, timers);
  const earlier = request.getSignal();
  request.setSignal(earlier ? AbortSignal.any([earlier, controller.signal]) : controller.signal);
  return () => {
    for (const each of deadlineTimers.get(request) ?? []) clearTimeout(each);
    deadlineTimers.delete(request);
  };
}

/** The KubernetesRequestTimeoutError of `request` when its deadline passed, else undefined. */
export function requestTimeoutError(
  request: RequestContext,
  cause?: unknown,
): KubernetesRequestTimeoutError | undefined {
  const reason: unknown = request.getSignal()?.reason;
  if (!(reason instanceof DeadlinePassed)) return undefined;
  const { pathname } = new URL(request.getUrl());
  return new KubernetesRequestTimeoutError(
    request.getHttpMethod(),
    pathname,
    reason.timeoutMs,
    reason.limit,
    {
      cause,
    },
  );
}

/**
 * Per-call options of a generated API call (its last argument) that bound it by `timeoutMs`, named
 * `limit` in the error, as well as by the clients' own deadline: the earlier fires. The middleware
 * is appended to the clients' (none today), as setHeaderOptions does. Needs loadKubernetesClient.
 */
export function requestDeadline(timeoutMs: number, limit: string): ConfigurationOptions {
  // The object-parameter APIs run per-call middleware as client-node's Observable kind.
  const { Observable } = kubernetesClient();
  const middleware: ObservableMiddleware = {
    pre(request) {
      addDeadline(request, timeoutMs, limit);
      return new Observable(Promise.resolve(request));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: "append" };
}

/**
 * client-node's fetch library with a deadline of `timeoutMs` (backend.requestTimeoutMs) on each
 * request, its body included: a late answer rejects KubernetesRequestTimeoutError.
 */
function boundedHttp(k8s: KubernetesClient, timeoutMs: number): PromiseHttpLibrary {
  const fetchLibrary = new k8s.IsomorphicFetchHttpLibrary();
  return {
    async send(request: RequestContext): Promise<ResponseContext> {
      const stopTimer = addDeadline(request, timeoutMs, "backend.requestTimeoutMs");
      const late = (err: unknown): never => {
        stopTimer();
        throw requestTimeoutError(request, err) ?? err;
      };
      const response = await fetchLibrary.send(request).toPromise().catch(late);
      const { body } = response;
      // The deadline covers the body too: the timer stops once it is read (the API's handler reads it).
      const read = <T>(reading: Promise<T>) => reading.catch(late).finally(stopTimer);
      return new k8s.ResponseContext(response.httpStatusCode, response.headers, {
        text: () => read(body.text()),
        binary: () => read(body.binary()),
      });
    },
  };
}

/**
 * What config.makeApiClient would configure (the current context's server, the kubeconfig's
 * credentials), with each request bounded by `timeoutMs`: pass it to `new k8s.CoreV1Api(…)` and the
 * other generated APIs. Throws Error when the kubeconfig has no current cluster.
 */
export function boundedConfiguration(
  k8s: KubernetesClient,
  kubeConfig: KubeConfig,
  timeoutMs: number,
): Configuration {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster)
    throw new InvalidArgumentError(
      "The kubeconfig has no current cluster (its current-context names none); set one with 'kubectl config use-context NAME', or point backend.kubeconfig (or KUBECONFIG) at a kubeconfig that has one.",
    );
  return k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: boundedCredentials(kubeConfig, timeoutMs) },
    httpApi: k8s.wrapHttpLibrary(boundedHttp(k8s, timeoutMs)),
  });
}

/**
 * The kubeconfig's credential step (client-node applies it to each request before sending it: a
 * token, a client certificate, or an exec plugin or token refresh, which may run a program and wait
 * for it without a limit of its own) bounded by `timeoutMs` too: past it the request fails with
 * KubernetesRequestCredentialsTimeoutError and is not sent.
 */
function boundedCredentials(kubeConfig: KubeConfig, timeoutMs: number): SecurityAuthentication {
  return {
    getName: () => "default",
    applySecurityAuthentication: (request) =>
      within(kubeConfig.applySecurityAuthentication(request), timeoutMs, () => {
        const { pathname } = new URL(request.getUrl());
        return new KubernetesRequestCredentialsTimeoutError(request.getHttpMethod(), pathname, timeoutMs);
      }),
  };
}

/** `work`'s outcome, or a rejection with `late()` when it has not settled within `timeoutMs`. */
async function within<T>(work: Promise<T> | T, timeoutMs: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * client-node's Exec (pods/exec over a WebSocket) whose opening is bounded by `timeoutMs`, in two
 * steps: the kubeconfig's credentials for it (client-node's applyToHTTPSOptions: an exec plugin or a
 * token refresh may run there), then the connection, through a proxy if the kubeconfig names one,
 * and the API server's answer to the upgrade, cut by a wall-clock timer (ws's own handshakeTimeout
 * is an idle timeout of the socket, which a proxy's agent overrides). A cut socket never opens, so
 * no stream opens late beside a newer one. The failure's message names the limit; the stream
 * itself, once open, is long-lived and has no deadline.
 */
export function boundedExec(
  k8s: KubernetesClient,
  kubeConfig: KubeConfig,
  timeoutMs: number,
): InstanceType<KubernetesClient["Exec"]> {
  // The WebSocket class client-node itself uses (isomorphic-ws is ws on Node).
  const fromClient = createRequire(createRequire(import.meta.url).resolve("@kubernetes/client-node"));
  const WebSocketClass = fromClient("isomorphic-ws") as typeof WebSocket;
  const limit = `${timeoutMs} ms (backend.requestTimeoutMs)`;
  // The kubeconfig as WebSocketHandler reads it, with its credential step bounded.
  const credentialsBounded = Object.create(kubeConfig) as KubeConfig;
  credentialsBounded.applyToHTTPSOptions = (opts) =>
    within(
      kubeConfig.applyToHTTPSOptions(opts),
      timeoutMs,
      () =>
        new Error(
          `the kubeconfig's credentials (an exec plugin or a token refresh) were not ready within ${limit}, so the exec stream (pods/exec) was not opened`,
        ),
    );
  const socketFactory = (uri: string, protocols: string[], opts: ClientOptions): WebSocket => {
    const socket = new WebSocketClass(uri, protocols, opts);
    let cut = false;
    const timer = setTimeout(() => {
      if (socket.readyState !== socket.CONNECTING) return;
      cut = true;
      socket.terminate();
    }, timeoutMs);
    timer.unref();
    socket.once("open", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
    // Registered before client-node's own handler, which rejects the exec with this error.
    socket.once("error", (err: Error) => {
      if (cut) err.message = `the API server did not open the exec stream (pods/exec) within ${limit}`;
    });
    return socket;
  };
  return new k8s.Exec(kubeConfig, new k8s.WebSocketHandler(credentialsBounded, socketFactory));
}
