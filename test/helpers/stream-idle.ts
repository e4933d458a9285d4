/**
 * The node's real streaming idle timeout, for test/k8s/stream-idle.test.ts:
 * - nodeStreamIdleTimeoutMs: containerd's CRI `stream_idle_timeout` on the test node, read from the
 *   config the node's containerd loaded (scripts/ensure-k8s.sh keeps a copy of it), or given.
 * - legacyExec: a pods/exec client that offers only the v4.channel.k8s.io WebSocket protocol. The
 *   API server (Kubernetes 1.30+, TranslateStreamCloseWebsocketRequests) turns a v5 WebSocket into
 *   SPDY to the kubelet and pings that every 5 s (k8s.io/apiserver pkg/util/proxy/streamtranslator.go),
 *   so containerd never sees such a stream idle; a v4 WebSocket is proxied through unchanged to
 *   containerd's streaming server, as every exec is on clusters before 1.30 or with that gate off,
 *   and there containerd's timeout closes it.
 */
import { readFileSync } from "node:fs";
import { Exec, KubeConfig } from "@kubernetes/client-node";
import { WebSocketHandler } from "@kubernetes/client-node/dist/web-socket-handler.js";
import WebSocket from "ws";
import { OWN_KUBECONFIG, TEST_KUBECONFIG } from "./k8s.js";

/** The config the test node's containerd runs with (scripts/ensure-k8s.sh copies it there on start). */
export const LOADED_CONTAINERD_CONFIG = "/run/warden-k8s/containerd.toml.loaded";

/** A Go duration ("90s", "1m30s", "4h0m0s", "1.5m") in ms; throws on anything else. */
export function goDurationMs(text: string): number {
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text)
    throw new Error(`${JSON.stringify(text)} is not a Go duration`);
  return parts.reduce((ms, [, n, u]) => ms + Number(n) * (unit[u as string] ?? Number.NaN), 0);
}

/**
 * The node's CRI `stream_idle_timeout`, ms: $WARDEN_TEST_STREAM_IDLE_TIMEOUT (a Go duration, for
 * another cluster), else the value in this project's node's loaded containerd config. Throws naming
 * both when neither says it (containerd's default, 4 h, is too long for a test).
 */
export function nodeStreamIdleTimeoutMs(): number {
  const given = process.env.WARDEN_TEST_STREAM_IDLE_TIMEOUT;
  if (given) return goDurationMs(given);
  const how =
    "set WARDEN_TEST_STREAM_IDLE_TIMEOUT to the node's containerd stream_idle_timeout, or run this project's cluster (scripts/ensure-k8s.sh sets it from WARDEN_K8S_STREAM_IDLE_TIMEOUT, default 90s)";
  if (TEST_KUBECONFIG !== OWN_KUBECONFIG) throw new Error(`the test cluster is not this project's: ${how}`);
  let config: string;
  try {
    config = readFileSync(LOADED_CONTAINERD_CONFIG, "utf8");
  } catch (err) {
    throw new Error(`reading ${LOADED_CONTAINERD_CONFIG}: ${(err as Error).message}; ${how}`);
  }
  const value = /^\s*stream_idle_timeout\s*=\s*"([^"]*)"/m.exec(config)?.[1];
  if (!value) throw new Error(`${LOADED_CONTAINERD_CONFIG} sets no stream_idle_timeout (default 4h); ${how}`);
  return goDurationMs(value);
}

/** An Exec on `kubeconfig` whose WebSockets offer only v4.channel.k8s.io (see the file comment). */
export function legacyExec(kubeconfig = TEST_KUBECONFIG): Exec {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const v4 = (uri: string, _offered: string[], opts: WebSocket.ClientOptions) =>
    new WebSocket(uri, ["v4.channel.k8s.io"], opts);
  return new Exec(config, new WebSocketHandler(config, v4 as never));
}
