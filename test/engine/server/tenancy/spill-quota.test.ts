/**
 * `warden serve` in-process on the backend under test (test/helpers/backend.ts): a tenant's spill cap (quotas.spillBytes) holds across
 * its sessions, each session's own cap (quotas.spillSessionBytes) within it, and a closed session's
 * bytes come back to the tenant. Results name `/spill/` handles, never the state directory.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveServerConfig } from "../../../../src/server/config/index.js";
import { openServeBackend, serveSessions } from "../../../../src/server/run-serve.js";
import { type RunningServer, startServer } from "../../../../src/server/server.js";
import { hashKey } from "../../../../src/server/tenancy/auth.js";
import {
  backendLeftovers,
  describeBackend,
  removeBackendTenant,
  testServeBackend,
} from "../../../helpers/backend.js";
import { testQuotas } from "../../../helpers/server-fixture.js";

const TENANT = `test-spill-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;
const MiB = 1024 * 1024;

interface BashResult {
  isError: boolean;
  content: { text: string }[];
  details: { fullOutputPath?: string; spill?: { keptBytes: number; totalBytes: number } };
}

describeBackend("warden serve: spill quotas per session and per tenant", () => {
  let dir: string;
  let server: RunningServer;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
    });
  const newSession = async () =>
    ((await (await api("/v1/sessions", { method: "POST", body: "{}" })).json()) as { id: string }).id;
  const bash = async (id: string, command: string) => {
    const res = await api(`/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: "bash", arguments: { command } }] }),
    });
    const body = await res.text();
    expect(body).not.toContain(dir);
    return (JSON.parse(body) as { results: BashResult[] }).results[0]!;
  };
  const footer = (r: BashResult) => r.content[0]!.text.slice(r.content[0]!.text.lastIndexOf("\n[") + 1);
  const spillDir = () => join(dir, "state", "spill");
  async function spillBytesOnDisk(): Promise<number> {
    let total = 0;
    for (const sub of await readdir(spillDir())) {
      for (const name of await readdir(join(spillDir(), sub))) {
        if (name !== ".owner") total += (await stat(join(spillDir(), sub, name))).size;
      }
    }
    return total;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-srv-spill-"));
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        warmPool: { size: 0 },
        ...testServeBackend(),
        tenants: [
          {
            id: TENANT,
            keys: [{ id: "k", sha256: hashKey(KEY) }],
            quotas: { ...testQuotas(3), spillSessionBytes: MiB, spillBytes: 1.5 * MiB },
          },
        ],
      },
      dir,
    );
    const backend = await openServeBackend(config);
    server = await startServer({
      config,
      backend,
      sessions: serveSessions(config, backend),
      onExit: "close",
    });
  });
  afterAll(async () => {
    await server?.shutdown(0);
    const left = await backendLeftovers(TENANT);
    await removeBackendTenant(TENANT);
    expect(left).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it("the tenant cap holds across sessions; a closed session gives its bytes back", async () => {
    const [a, b] = [await newSession(), await newSession()];
    const ra = await bash(a, "seq 1 400000");
    expect(ra.details.spill).toMatchObject({ keptBytes: MiB, totalBytes: 2_688_895 });
    expect(footer(ra)).toBe(
      "[Showing lines 398001-400000 of 400000. Full output not kept: the session's spill files reached their " +
        `1.0MB cap, so ${ra.details.fullOutputPath} holds only its first 1.0MB of 2.6MB (raise the cap with ` +
        `quotas.spillSessionBytes of tenant '${TENANT}' in the server config)]`,
    );
    const rb = await bash(b, "seq 1 400000");
    expect(rb.details.spill).toMatchObject({ keptBytes: 0.5 * MiB, totalBytes: 2_688_895 });
    expect(footer(rb)).toBe(
      "[Showing lines 398001-400000 of 400000. Full output not kept: the tenant's spill files reached their " +
        `1.5MB cap, so ${rb.details.fullOutputPath} holds only its first 512.0KB of 2.6MB (raise the cap with ` +
        `quotas.spillBytes of tenant '${TENANT}' in the server config)]`,
    );
    // A third session finds the tenant's budget used up.
    const c = await newSession();
    const rc = await bash(c, "seq 1 400000");
    expect(rc.details.fullOutputPath).toBeUndefined();
    expect(footer(rc)).toContain("the tenant's spill files reached their 1.5MB cap, so none of it was kept");
    expect(await spillBytesOnDisk()).toBe(1.5 * MiB);

    // Closing a removes its file and frees its MiB for the tenant: c now keeps up to its own cap.
    expect((await api(`/v1/sessions/${a}`, { method: "DELETE" })).status).toBe(204);
    const again = await bash(c, "seq 1 400000");
    expect(again.details.spill).toMatchObject({ keptBytes: MiB });
    expect(await spillBytesOnDisk()).toBe(1.5 * MiB);
  }, 180_000);
});
