/**
 * The claim's check of a warm-pool spare, on both backends: its helper must answer a ping before the
 * spare is handed over, so a spare whose processes were stopped is discarded (the pool then goes
 * cold: src/sandbox/pool/warm-pool.ts claim) instead of becoming a session whose every call hangs.
 */
import { SandboxError } from "../errors.js";
import { isAbortError } from "../util/index.js";
import type { ChannelClient } from "./channel/protocol/client.js";

/**
 * How long a warm-pool spare's helper has to answer the claim's ping, ms: 10 s. A spare whose
 * processes were stopped (`kill -STOP -1` through `kubectl exec` or `docker exec`) still has its
 * channel open; a Pod's heartbeat notices only after heartbeatMs (default 60 s) plus its ping
 * timeout, and a Docker spare has none. Not shorter: a sandbox Pod requests 10m CPU, so on a busy
 * node its helper may wait seconds for the CPU (with 2 s, one CI run's claim in
 * test/k8s/serve.test.ts made a cold Pod instead of taking the live spare, under test:k8s's
 * parallel files; not reproduced with the file alone).
 */
const SPARE_PING_TIMEOUT_MS = 10_000;

/**
 * Resolves once `channel`'s helper answers a ping; rejects SandboxError naming `what` (the spare,
 * e.g. "warm-pool spare Pod ns/name") when it does not within SPARE_PING_TIMEOUT_MS, and
 * AbortError when `signal` fires.
 */
export async function pingSpare(channel: ChannelClient, what: string, signal?: AbortSignal): Promise<void> {
  try {
    await channel.ping(signal, { timeoutMs: SPARE_PING_TIMEOUT_MS });
  } catch (err) {
    if (isAbortError(err)) throw err;
    throw new SandboxError(
      `${what} did not answer a ping within ${SPARE_PING_TIMEOUT_MS} ms (${(err as Error).message}); it is deleted and not handed over.`,
      { cause: err },
    );
  }
}
