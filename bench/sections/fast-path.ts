/**
 * Fast-path section (issue 7): warden's exec channel and warm pool against raw Docker, measured
 * in the same run. Rows: tool-call overhead of bash `true` on a warm session vs a raw dockerode
 * exec round trip (target p50 <= 0.1x); the bare channel exec beside it (the floor); cold start
 * vs raw create+start (<= 1.2x); warm-pool claims, on a quiet and on a busy engine (p50 <= 20 ms,
 * p99 <= 50 ms); 1 GiB of bash output through the tail truncation vs raw
 * `docker exec` of the same command into nothing (time <= 2x, i.e. throughput >= 50%) with the
 * controller's RSS growth (<= 64 MiB); `read` with a limit on a 2 GiB file (<= 1 s, RSS <= 64 MiB)
 * beside `wc -l` of that file in the sandbox.
 * Sizes: WARDEN_BENCH_OUTPUT_MIB (default 1024), WARDEN_BENCH_BIG_FILE_MIB (default 2048);
 * counts: WARDEN_BENCH_EXECS (40), WARDEN_BENCH_CREATES (5), WARDEN_BENCH_CLAIMS (50 per phase).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type Docker from "dockerode";
import { channelExec } from "../../src/sandbox/channel/index.js";
import { connectChannel, withHelperMain } from "../../src/sandbox/docker/channel/index.js";
import { StreamDemuxer } from "../../src/sandbox/docker/demux.js";
import { hardenedContainerConfig } from "../../src/sandbox/docker/hardening.js";
import type { PreparedSandbox } from "../../src/sandbox/docker/prepare.js";
import {
  DEFAULT_IMAGE,
  dockerPoolBackend,
  gc,
  getDocker,
  LABEL,
  type PoolRequest,
  resolveLimits,
  WarmPool,
} from "../../src/sandbox/index.js";
import { sandboxLabels } from "../../src/sandbox/labels.js";
import { createSession } from "../../src/session/index.js";
import type { Session } from "../../src/session/types.js";
import { type BenchRow, type BenchSection, percentile, timeRuns } from "../harness.js";

const ROUNDS = Number(process.env.WARDEN_BENCH_EXECS ?? 40);
const CREATES = Number(process.env.WARDEN_BENCH_CREATES ?? 5);
const CLAIMS = Number(process.env.WARDEN_BENCH_CLAIMS ?? 50);
const READS = 3;
const OUTPUT_BYTES = Number(process.env.WARDEN_BENCH_OUTPUT_MIB ?? 1024) * 1024 * 1024;
const BIG_FILE_BYTES = Number(process.env.WARDEN_BENCH_BIG_FILE_MIB ?? 2048) * 1024 * 1024;
const MiB = 1024 * 1024;
const RAW = "raw dockerode";
const LINES = "yes abcdefghijklmnop";

/** One raw exec of `cmd`, output demuxed and dropped; resolves when the stream ends. */
async function rawExec(container: Docker.Container, cmd: string[]): Promise<void> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const demux = new StreamDemuxer({ onStdout: () => {}, onStderr: () => {} });
  stream.on("data", (chunk: Buffer) => demux.push(chunk));
  await new Promise((resolve) => {
    stream.once("end", resolve);
    stream.once("close", resolve);
  });
  await exec.inspect();
}

/** Samples RSS while `fn` runs (every 20 ms) and returns the peak growth in MiB and the duration. */
async function measured(fn: () => Promise<unknown>): Promise<{ ms: number; rssGrowthMiB: number }> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const t0 = performance.now();
  try {
    await fn();
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ms: performance.now() - t0, rssGrowthMiB: (peak - before) / MiB };
}

function bashCall(command: string, i: number) {
  return [{ id: `b${i}`, name: "bash", arguments: { command, timeout: 600 } }];
}

/** Claims `count` sessions one after another, each after the refill settled; their times (ms) and how many were pooled. */
async function timeClaims(
  pool: WarmPool<PoolRequest, PreparedSandbox>,
  request: PoolRequest,
  count: number,
): Promise<{ claims: number[]; pooled: number }> {
  const claims: number[] = [];
  let pooled = 0;
  for (let i = 0; i < count; i++) {
    const claim = await pool.claim(request);
    claims.push(claim.claimMs);
    if (claim.pooled) pooled++;
    await claim.sandbox.destroy();
    await pool.settled();
  }
  return { claims, pooled };
}

/**
 * Keeps the engine busy until `stop` fires: create, start and force-remove plain containers in a
 * loop, the load other sessions' cold starts and teardowns put on it. Resolves with the cycles done.
 */
async function churnEngine(
  docker: Docker,
  labels: Record<string, string>,
  stop: AbortSignal,
): Promise<number> {
  let cycles = 0;
  while (!stop.aborted) {
    const c = await docker.createContainer({
      Image: DEFAULT_IMAGE,
      Cmd: ["true"],
      Labels: labels,
      HostConfig: { NetworkMode: "none" },
    });
    await c.start().finally(() => c.remove({ force: true }));
    cycles++;
  }
  return cycles;
}

/**
 * Warm pool: claims of a session with a small copy-mode workspace (10 files) from a pool of 2,
 * each after the refill settled (so every claim is a pooled one), after one unmeasured claim;
 * then the same while the engine is kept busy (a claim must not wait on it: it only copies the
 * workspace over the channel). Baseline: raw create+start.
 */
async function poolRows(
  tenant: string,
  rawCreateP50: number,
  rawLabels: Record<string, string>,
): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), "warden-bench-ws-"));
  const pool = new WarmPool({ backend: dockerPoolBackend({ tenant }), size: 2 });
  const baseline = { baseline: rawCreateP50, baselineName: "raw create+start" };
  try {
    for (let i = 0; i < 10; i++) await writeFile(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(100));
    const request: PoolRequest = {
      template: { tenant, ttlMs: 3_600_000 },
      claim: { workspace: { hostPath: dir } },
    };
    await pool.warm(request);
    await pool.settled();
    // One unmeasured claim first, as the exec rows do one unmeasured call (JIT, first-use costs).
    await timeClaims(pool, request, 1);
    const idle = await timeClaims(pool, request, CLAIMS);
    const stop = new AbortController();
    const churn = churnEngine(getDocker(), rawLabels, stop.signal);
    const busy = await timeClaims(pool, request, CLAIMS).finally(() => stop.abort());
    const cycles = await churn;
    return [
      { name: "pool claim p50", unit: "ms", value: percentile(idle.claims, 50), ...baseline },
      { name: "pool claim p99", unit: "ms", value: percentile(idle.claims, 99), ...baseline },
      { name: "pool claim p50, engine busy", unit: "ms", value: percentile(busy.claims, 50), ...baseline },
      { name: "pool claim p99, engine busy", unit: "ms", value: percentile(busy.claims, 99), ...baseline },
      {
        name: "pool claims served warm",
        unit: "count",
        value: idle.pooled + busy.pooled,
        baseline: 2 * CLAIMS,
        baselineName: "claims",
      },
      { name: "engine churn during busy claims", unit: "count", value: cycles },
    ];
  } finally {
    await pool.drain();
    await rm(dir, { recursive: true, force: true });
  }
}

export const fastPathSection: BenchSection = {
  name: "fast-path",
  description: "exec channel and warm pool vs raw Docker (issue 7 targets)",
  async run(): Promise<BenchRow[]> {
    const docker = getDocker();
    const tenant = `bench-fast-${randomBytes(3).toString("hex")}`;
    const expiresAt = new Date(Date.now() + 3_600_000);
    const rawLabels = {
      [LABEL.session]: "bench-raw",
      [LABEL.tenant]: tenant,
      [LABEL.expires]: expiresAt.toISOString(),
    };
    const containers: Docker.Container[] = [];
    const sessions: Session[] = [];
    const rows: BenchRow[] = [];
    try {
      // Cold start: raw create+start vs a hardened container with the helper connected.
      const rawCreate = await timeRuns(CREATES, async () => {
        const c = await docker.createContainer({
          Image: DEFAULT_IMAGE,
          Cmd: ["sleep", "infinity"],
          Labels: rawLabels,
          HostConfig: { NetworkMode: "none", Init: true },
        });
        containers.push(c);
        await c.start();
      });
      const helperCreate = await timeRuns(CREATES, async () => {
        const now = new Date();
        const c = await docker.createContainer(
          withHelperMain(
            hardenedContainerConfig({
              image: DEFAULT_IMAGE,
              limits: resolveLimits({}),
              runtime: "runc",
              labels: sandboxLabels({ sessionId: "bench-helper", tenant, createdAt: now, expiresAt }),
              workspaceMode: "ro",
              mounts: [],
              uid: 1000,
            }),
          ),
        );
        containers.push(c);
        (await connectChannel(c, { start: true })).close();
      });
      rows.push({
        name: "cold start (helper container) p50",
        unit: "ms",
        value: percentile(helperCreate, 50),
        baseline: percentile(rawCreate, 50),
        baselineName: "raw create+start",
      });

      rows.push(...(await poolRows(tenant, percentile(rawCreate, 50), rawLabels)));

      const raw = containers[0]!;
      const helper = containers[CREATES]!;
      const client = await connectChannel(helper);
      const session = await createSession({
        tenant,
        sandbox: { ttlMs: 3_600_000, limits: { memoryBytes: 4096 * MiB, workspaceBytes: 3072 * MiB } },
      });
      sessions.push(session);
      await rawExec(raw, ["true"]);
      await session.runToolCalls(bashCall("true", -1));
      const rawTrue: number[] = [];
      const chanTrue: number[] = [];
      const toolTrue: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        rawTrue.push(...(await timeRuns(1, () => rawExec(raw, ["true"]))));
        chanTrue.push(...(await timeRuns(1, () => channelExec(client, { argv: ["true"] }))));
        toolTrue.push(...(await timeRuns(1, () => session.runToolCalls(bashCall("true", i)))));
      }
      for (const p of [50, 99]) {
        rows.push({
          name: `tool call bash true p${p}`,
          unit: "ms",
          value: percentile(toolTrue, p),
          baseline: percentile(rawTrue, p),
          baselineName: `${RAW} exec true`,
        });
      }
      rows.push({
        name: "channel exec true p50",
        unit: "ms",
        value: percentile(chanTrue, 50),
        baseline: percentile(rawTrue, 50),
        baselineName: `${RAW} exec true`,
      });
      client.close();

      // 1 GiB of output: raw exec into nothing vs the bash tool (tail truncation + spill file).
      const script = `${LINES} | head -c ${OUTPUT_BYTES}`;
      const rawBig = await measured(() => rawExec(raw, ["bash", "-c", script]));
      const toolBig = await measured(() => session.runToolCalls(bashCall(script, 1_000_000)));
      rows.push({
        name: `bash ${OUTPUT_BYTES / MiB} MiB output time`,
        unit: "ms",
        value: toolBig.ms,
        baseline: rawBig.ms,
        baselineName: `${RAW} exec, output dropped`,
      });
      rows.push({ name: "bash big output RSS growth", unit: "MiB", value: toolBig.rssGrowthMiB });

      // read with a limit on a 2 GiB file (it counts the file's lines for the footer), three times,
      // each beside `wc -l` of the same file in the same sandbox: the floor of counting them.
      await session.runToolCalls(bashCall(`${LINES} | head -c ${BIG_FILE_BYTES} > big.log`, 2_000_000));
      const reads: number[] = [];
      const counts: number[] = [];
      let readRss = 0;
      for (let i = 0; i < READS; i++) {
        const read = await measured(() =>
          session.runToolCalls([{ id: `r${i}`, name: "read", arguments: { path: "big.log", limit: 5 } }]),
        );
        reads.push(read.ms);
        readRss = Math.max(readRss, read.rssGrowthMiB);
        counts.push(
          ...(await timeRuns(1, () => session.runToolCalls(bashCall("wc -l < big.log", 3_000_000 + i)))),
        );
      }
      rows.push({
        name: `read limit 5 on ${BIG_FILE_BYTES / MiB} MiB file p50`,
        unit: "ms",
        value: percentile(reads, 50),
        baseline: percentile(counts, 50),
        baselineName: "bash `wc -l` of it, same sandbox",
      });
      rows.push({ name: "read big file RSS growth", unit: "MiB", value: readRss });
      return rows;
    } finally {
      await Promise.allSettled(sessions.map((s) => s.close()));
      await Promise.allSettled(containers.map((c) => c.remove({ force: true, v: true })));
      await gc({ tenant, now: new Date(Date.now() + 7_200_000) });
    }
  },
};
