/**
 * Server load section (issue 6): `warden serve` in-process on the real engine, 20 sessions from 4
 * tenants, every session issuing tool-call batches concurrently over HTTP (a bash call and an ls
 * each). Reports p50 / p99 tool-call latency and the error count (non-200 answers or isError
 * results; must be 0). Baseline: the same batches on the same sessions through Session.runToolCalls
 * directly (no HTTP, auth, quotas or audit), with the same concurrency, measured in the same run.
 * Rounds per session: WARDEN_BENCH_SERVER_ROUNDS (default 10).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openSandboxBackend } from "../../src/sandbox/index.js";
import { resolveServerConfig } from "../../src/server/config/index.js";
import { startServer } from "../../src/server/server.js";
import { hashKey } from "../../src/server/tenancy/auth.js";
import type { ToolCall } from "../../src/tools/types.js";
import { type BenchRow, type BenchSection, percentile } from "../harness.js";

const ROUNDS = Number(process.env.WARDEN_BENCH_SERVER_ROUNDS ?? 10);
const TENANTS = 4;
const SESSIONS_PER_TENANT = 5;

const batch = (round: number): ToolCall[] => [
  { id: `b${round}`, name: "bash", arguments: { command: `echo round-${round} > r.txt; cat r.txt` } },
  { id: `l${round}`, name: "ls", arguments: { path: "." } },
];

export const serverLoadSection: BenchSection = {
  name: "server-load",
  description: `warden serve: ${TENANTS * SESSIONS_PER_TENANT} sessions, ${TENANTS} tenants, concurrent batches over HTTP vs direct runToolCalls`,
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(join(tmpdir(), "warden-bench-serve-"));
    const suffix = randomBytes(3).toString("hex");
    const tenants = Array.from({ length: TENANTS }, (_, i) => ({
      id: `bench-srv-${i}-${suffix}`,
      key: `k${i}-${suffix}`,
    }));
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        tenants: tenants.map((t) => ({
          id: t.id,
          keys: [{ id: "k", sha256: hashKey(t.key) }],
          quotas: {
            maxSessions: SESSIONS_PER_TENANT,
            maxConcurrentToolCalls: 16,
            cpus: 0.5,
            memoryBytes: 134217728,
            workspaceBytes: 33554432,
          },
        })),
      },
      dir,
    );
    const server = await startServer({
      config,
      backend: await openSandboxBackend({ kind: "docker" }),
      onExit: "close",
    });
    try {
      const headers = (key: string) => ({
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
      });
      const t0 = performance.now();
      const sessions = await Promise.all(
        tenants.flatMap((t) =>
          Array.from({ length: SESSIONS_PER_TENANT }, async () => {
            const res = await fetch(`${server.url}/v1/sessions`, {
              method: "POST",
              headers: headers(t.key),
              body: "{}",
            });
            if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
            return { key: t.key, id: ((await res.json()) as { id: string }).id };
          }),
        ),
      );
      const createMs = performance.now() - t0;

      let errors = 0;
      let firstError = "";
      const fail = (what: string) => {
        errors++;
        firstError ||= what;
      };
      const http: number[] = [];
      await Promise.all(
        sessions.map(async (s) => {
          for (let round = 0; round < ROUNDS; round++) {
            const start = performance.now();
            const res = await fetch(`${server.url}/v1/sessions/${s.id}/tool-calls`, {
              method: "POST",
              headers: headers(s.key),
              body: JSON.stringify({ toolCalls: batch(round) }),
            });
            const body = (await res.json()) as { results?: { isError: boolean }[] };
            http.push(performance.now() - start);
            if (res.status !== 200 || !body.results || body.results.some((r) => r.isError)) {
              fail(`HTTP ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
            }
          }
        }),
      );

      const direct: number[] = [];
      await Promise.all(
        server.ctx.registry.all().map(async (live) => {
          for (let round = 0; round < ROUNDS; round++) {
            const start = performance.now();
            const results = await live.session.runToolCalls(batch(round));
            direct.push(performance.now() - start);
            if (results.some((r) => r.isError)) fail(`direct: ${JSON.stringify(results).slice(0, 300)}`);
          }
        }),
      );
      if (firstError) console.error(`server-load: first error: ${firstError}`);
      const base = (p: number) => ({
        baseline: percentile(direct, p),
        baselineName: `direct runToolCalls p${p}`,
      });
      return [
        { name: `create ${sessions.length} sessions (concurrent, total)`, value: createMs, unit: "ms" },
        { name: "tool-call batch over HTTP p50", value: percentile(http, 50), unit: "ms", ...base(50) },
        { name: "tool-call batch over HTTP p99", value: percentile(http, 99), unit: "ms", ...base(99) },
        { name: "batches over HTTP", value: http.length, unit: "count" },
        { name: "errors (must be 0)", value: errors, unit: "count" },
      ];
    } finally {
      await server.shutdown(0);
      await rm(dir, { recursive: true, force: true });
    }
  },
};
