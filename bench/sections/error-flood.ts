/**
 * Error-flood section (issue 37, item 2): `warden serve` on the real engine with two tenants, in a
 * process of its own (noisy-server.ts). Tenant A sends tool calls whose arguments fail validation
 * (600 KB: 300,000 numbers nested 60 arrays deep, whose unbounded pretty-printed echo was 37 MB)
 * on WARDEN_BENCH_FLOOD_UNREAD connections (default 8, A's maxConcurrentToolCalls) and never reads
 * the answers; tenant B's `ls` latency is measured with no flood (the baseline) and then from the
 * moment the flood is sent (while A's answers are made, then while they sit unread),
 * WARDEN_BENCH_FLOOD_SAMPLES calls each (default 200). Rows: B's p50 / p99 under the flood with the
 * idle figure as baseline, the size of one error answer (baseline: its request's size), how long
 * the server took to start all of A's answers, and the server process's resident memory (VmRSS,
 * /proc, Linux) after B's flooded samples against before the flood. Before the fix (Pi's unbounded
 * echo) one answer was 36,922 KiB and the 8 took 263 s on the loaded 2-core test machine.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { type ClientRequest, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { hashKey } from "../../src/server/tenancy/auth.js";
import { type BenchRow, type BenchSection, p99Name, percentile } from "../harness.js";
import { ask, forkChild, letGo, removeTenantContainers } from "./noisy-children.js";
import type { FromServer, ToServer } from "./noisy-server.js";

const UNREAD = Number(process.env.WARDEN_BENCH_FLOOD_UNREAD ?? 8);
const SAMPLES = Number(process.env.WARDEN_BENCH_FLOOD_SAMPLES ?? 200);
const NUMBERS = 300_000;
const DEPTH = 60;

/** A's tool-call body: `read` with a path that is not a string and 600 KB of nested numbers. */
function floodBody(): string {
  const pad = `${"[".repeat(DEPTH)}${Array(NUMBERS).fill(0).join(",")}${"]".repeat(DEPTH)}`;
  return `{"toolCalls":[{"id":"c","name":"read","arguments":{"path":{},"pad":${pad}}}]}`;
}

/** The resident memory of process `pid` in MiB (/proc/<pid>/status VmRSS). */
function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

export const errorFloodSection: BenchSection = {
  name: "error-flood",
  description: `warden serve: tenant B's ls latency while tenant A leaves ${UNREAD} validation-error answers of 600 KB calls unread, vs idle`,
  async run(): Promise<BenchRow[]> {
    const dir = await mkdtemp(join(tmpdir(), "warden-bench-flood-"));
    const suffix = randomBytes(3).toString("hex");
    const A = { id: `bench-flood-a-${suffix}`, key: `ka-${suffix}` };
    const B = { id: `bench-flood-b-${suffix}`, key: `kb-${suffix}` };
    const quotas = {
      maxSessions: 1,
      maxConcurrentToolCalls: UNREAD,
      cpus: 1,
      memoryBytes: 268435456,
      workspaceBytes: 67108864,
    };
    const config = {
      port: 0,
      stateDir: "state",
      jsonBodyLimitBytes: 1024 * 1024,
      tenants: [A, B].map((t) => ({ id: t.id, keys: [{ id: "k", sha256: hashKey(t.key) }], quotas })),
    };
    const server = forkChild("./noisy-server.js");
    const { url } = await ask<FromServer, "started">(
      server,
      { type: "start", config, dir } satisfies ToServer,
      "started",
    ).catch(async (err) => {
      letGo(server);
      await rm(dir, { recursive: true, force: true });
      throw err;
    });
    const api = (key: string, path: string, body: string) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      });
    const held: ClientRequest[] = [];
    try {
      const session = async (key: string) =>
        ((await (await api(key, "/v1/sessions", "{}")).json()) as { id: string }).id;
      const a = await session(A.key);
      const b = await session(B.key);
      const ls = JSON.stringify({ toolCalls: [{ id: "l", name: "ls", arguments: { path: "." } }] });
      const measure = async () => {
        const samples: number[] = [];
        for (let k = 0; k < SAMPLES; k++) {
          const t0 = performance.now();
          const res = await api(B.key, `/v1/sessions/${b}/tool-calls`, ls);
          await res.arrayBuffer();
          samples.push(performance.now() - t0);
          if (res.status !== 200) throw new Error(`B's ls answered ${res.status}`);
        }
        return samples;
      };
      const body = floodBody();
      // One answer read whole: its size.
      const answer = await (await api(A.key, `/v1/sessions/${a}/tool-calls`, body)).text();
      await measure(); // warm-up
      const rssIdle = rssMiB(server.pid);
      const idle = await measure();
      // The flood: each request sent whole, its answer never read (the response stays paused).
      const target = new URL(`/v1/sessions/${a}/tool-calls`, url);
      const t0 = performance.now();
      const answered: Promise<void>[] = [];
      for (let k = 0; k < UNREAD; k++) {
        const req = request(target, {
          method: "POST",
          headers: {
            authorization: `Bearer ${A.key}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        });
        answered.push(
          new Promise((resolve) => {
            req.on("response", (res) => {
              res.pause();
              resolve();
            });
            req.on("error", () => resolve());
          }),
        );
        req.end(body);
        held.push(req);
      }
      // B is measured from the moment the flood is sent: while A's answers are made, then unread.
      const answeredMs = Promise.all(answered).then(() => performance.now() - t0);
      const flooded = await measure();
      const answeredAfterMs = await answeredMs;
      const rssFlood = rssMiB(server.pid);
      return [
        {
          name: "B ls p50 under the flood",
          value: percentile(flooded, 50),
          unit: "ms",
          baseline: percentile(idle, 50),
          baselineName: "idle p50",
        },
        {
          name: p99Name("B ls under the flood", flooded.length),
          value: percentile(flooded, 99),
          unit: "ms",
          baseline: percentile(idle, 99),
          baselineName: "idle p99",
        },
        {
          name: "one error answer",
          value: answer.length / 1024,
          unit: "KiB",
          baseline: body.length / 1024,
          baselineName: "its request",
        },
        { name: `A's ${UNREAD} calls answered (headers, concurrent)`, value: answeredAfterMs, unit: "ms" },
        {
          name: `server RSS with ${UNREAD} answers unread`,
          value: rssFlood,
          unit: "MiB",
          baseline: rssIdle,
          baselineName: "before the flood",
        },
      ];
    } finally {
      for (const req of held) req.destroy();
      await ask<FromServer, "stopped">(server, { type: "stop" }, "stopped").catch(() =>
        removeTenantContainers([A.id, B.id]),
      );
      letGo(server);
      await rm(dir, { recursive: true, force: true });
    }
  },
};
