/**
 * A real `warden serve` (bin/warden.js, so run `npm run build` first, as CI's setup does) for the
 * client tests: three test tenants on one server. `main` has no policy and testQuotas(4); `limited`
 * has maxSessions 1 (for 429s); `policy` runs policies/default.yaml (whose `sleep` asks). The
 * warm pool is off, so nothing outlives a deleted session. On the backend under test
 * (test/helpers/backend.ts): Docker, or Pods on the test cluster under `npm run test:k8s`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { WardenClient } from "../../src/client/index.js";
import { hashKey } from "../../src/server/tenancy/auth.js";
import { removeBackendTenant, testServeBackend } from "./backend.js";
import { type ServeChild, spawnServe, testQuotas } from "./server-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** A served set of tenants; `keys.main` etc. are the bearer keys. */
export interface ServedTenants {
  serve: ServeChild;
  url: string;
  keys: { main: string; limited: string; policy: string };
  stop(): Promise<void>;
}

/** Starts the server with tenants `${prefix}-main`, `-limited` and `-policy`; `server` adds config fields. */
export async function serveTenants(
  prefix: string,
  server: Record<string, unknown> = {},
): Promise<ServedTenants> {
  const dir = await mkdtemp(join(tmpdir(), "warden-client-"));
  const keys = {
    main: `${prefix}-key-main`,
    limited: `${prefix}-key-limited`,
    policy: `${prefix}-key-policy`,
  };
  const tenant = (name: keyof typeof keys, extra: Record<string, unknown> = {}) => ({
    id: `${prefix}-${name}`,
    keys: [{ id: name, sha256: hashKey(keys[name]) }],
    quotas: testQuotas(4),
    ...extra,
  });
  const config = join(dir, "serve.json");
  await writeFile(
    config,
    JSON.stringify({
      port: 0,
      stateDir: "state",
      warmPool: { size: 0 },
      ...testServeBackend(),
      ...server,
      tenants: [
        tenant("main"),
        tenant("limited", { quotas: testQuotas(1) }),
        tenant("policy", { policy: [join(ROOT, "policies/default.yaml")] }),
      ],
    }),
  );
  const serve = await spawnServe(join(ROOT, "bin/warden.js"), config, ["--on-exit", "close"]);
  return {
    serve,
    url: serve.url,
    keys,
    async stop() {
      serve.child.kill("SIGTERM");
      await serve.exited;
      for (const name of Object.keys(keys)) await removeBackendTenant(`${prefix}-${name}`);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One session of tenant `main` on a served set, reached through its files route and bash tool. */
export interface ServedSession {
  /** `/v1/sessions/:id/files?path=<path>` with `init` (GET unless it says otherwise), as tenant `main`. */
  files(path: string, init?: RequestInit): Promise<Response>;
  /** PUT `body` (default "x") as the bytes of `path` through the files route. */
  put(path: string, body?: string): Promise<Response>;
  /** The text the session's bash tool returns for `command` (its content parts joined). */
  bash(command: string): Promise<string | undefined>;
}

/**
 * Registers `beforeAll`/`afterAll` hooks in the calling describe block: serveTenants(prefix, server)
 * and one session of tenant `main` before the tests, the server stopped (tenants removed) after.
 * The returned functions may only be called from the tests.
 */
export function servedSession(prefix: string, server: Record<string, unknown> = {}): ServedSession {
  let served: ServedTenants;
  let client: WardenClient;
  let id: string;
  beforeAll(async () => {
    served = await serveTenants(prefix, server);
    client = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
    id = (await client.createSession()).id;
  });
  afterAll(async () => {
    await served?.stop();
  });
  const files = (path: string, init: RequestInit = {}) =>
    fetch(`${served.url}/v1/sessions/${id}/files?path=${encodeURIComponent(path)}`, {
      ...init,
      headers: { authorization: `Bearer ${served.keys.main}`, ...init.headers },
    });
  return {
    files,
    put: (path, body = "x") =>
      files(path, { method: "PUT", body, headers: { "content-type": "application/octet-stream" } }),
    async bash(command) {
      const [r] = await client.runToolCalls(id, [{ id: "b", name: "bash", arguments: { command } }]);
      return r?.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    },
  };
}
