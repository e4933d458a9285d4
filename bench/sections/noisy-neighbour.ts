/**
 * Noisy neighbour section (issue 11): `warden serve` on the real engine with two tenants, in a
 * process of its own (noisy-server.ts), as in production.
 * Tenant B's `bash true` latency is measured idle (the baseline), then again while tenant A sends the
 * worst inputs the body limits allow, in WARDEN_BENCH_NOISY_LOOPS parallel loops (default 2): an
 * `edit` replacing 12,000 lines with 12,000 different ones, GET /changes of a rewritten 12,000-line
 * file, the longest bash command the JSON body limit allows, and a 64 MiB output flood. The ratio
 * of B's p99 under load to its idle p99 is the figure (target <= 2x). A's own calls are reported too,
 * with their HTTP statuses (a clear 4xx for the long command is fine).
 * Tenant A's client runs in another child process (noisy-tenant.ts), as a real noisy tenant would,
 * and B's client in this one (one small request at a time): neither runs on the server's event
 * loop. Each load is also run alone, to tell which one costs; the server's event loop's largest
 * delay in each phase (monitorEventLoopDelay, read from its process) is reported too: it does not
 * depend on the engine's own latency, which varies a lot on a shared machine.
 * Idle and loaded blocks alternate within each phase, WARDEN_BENCH_NOISY_ROUNDS times (default 10),
 * and each phase's loaded p99 is compared with the p99 of its own idle blocks, which ran on the same
 * machine seconds before each loaded block (the whole run's idle p99 is printed too). Samples of B per block:
 * WARDEN_BENCH_NOISY_SAMPLES (default 300, so each side of a phase has 3,000 and its p99 is the
 * 30th largest; the row names print n: with 3 rounds of 200, the sixth of 600, one stall of the
 * machine decided a cell, and the same cell's ratio ran from 0.9 to 2.7 between runs minutes apart).
 * How busy the server's main thread was is reported per block, as its CPU ms per second (from /proc/<pid>/task/<pid>/schedstat, Linux): with A's calls completed, it tells
 * the event loop's share of the load apart from the rest of the machine. WARDEN_BENCH_NOISY_PHASES
 * (comma-separated kinds, e.g. `edit,flood`) runs only those single-load phases, for profiling;
 * WARDEN_BENCH_NOISY_OUTPUT_RATE sets the server's contendedOutputBytesPerSecond (0: off), to compare.
 * Who uses the CPU is printed per block (cpu-attribution.ts: the server's threads, A's client, the
 * engine's processes, each tenant's containers and the commands in them, the rest of the machine),
 * and, before the blocks, what one call of each load costs by consumer (WARDEN_BENCH_NOISY_COST_CALLS
 * calls one after another, default 10, floods 3 at most; 0: skipped): unlike the latencies, these
 * CPU figures stay meaningful while other work shares the machine.
 * A's client process runs at nice 19 and SCHED_IDLE (noisy-tenant.ts says why; its CPU row names
 * what it got); WARDEN_BENCH_NOISY_CLIENT_NICE=0 keeps it at the default priority, =19 at nice 19 only.
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import tar from "tar-stream";
import { hashKey } from "../../src/server/tenancy/auth.js";
import { type BenchRow, type BenchSection, percentile } from "../harness.js";
import { type CpuShare, startCpuAttribution } from "./cpu-attribution.js";
import { ask, forkChild, letGo, removeTenantContainers } from "./noisy-children.js";
import type { FromServer, ToServer } from "./noisy-server.js";
import { printTails } from "./noisy-tail.js";
import { type FromTenant, LINES, LOAD_KINDS, type LoadKind, linesOf, type ToTenant } from "./noisy-tenant.js";

/** CPU ms the main thread of process `pid` has run, from Linux's /proc/<pid>/task/<pid>/schedstat; NaN elsewhere. */
function mainThreadCpuMs(pid: number | undefined): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

const SAMPLES = Number(process.env.WARDEN_BENCH_NOISY_SAMPLES ?? 300);
/**
 * B's call i of a block starts no earlier than i times this many ms after the block's start, one in
 * flight at a time (a call slower than that is followed at once by the next); 0, the default: back
 * to back, as in docs/benchmarks.md's figures. Back to back, B alone keeps about 1.3 of the machine's 2
 * cores busy (about 150 calls a second: its container, the server's main thread and its client).
 */
const B_INTERVAL_MS = Number(process.env.WARDEN_BENCH_NOISY_B_INTERVAL_MS ?? 0);
/** Idle and loaded blocks per phase, alternating. */
const ROUNDS = Number(process.env.WARDEN_BENCH_NOISY_ROUNDS ?? 10);
const LOOPS = Number(process.env.WARDEN_BENCH_NOISY_LOOPS ?? 2);
/** A's calls per kind, one after another, whose CPU per call is printed by consumer (0: none). */
const COST_CALLS = Number(process.env.WARDEN_BENCH_NOISY_COST_CALLS ?? 10);
const ONLY = process.env.WARDEN_BENCH_NOISY_PHASES?.split(",").filter((k) => k !== "");
const BODY_LIMIT = 1024 * 1024;
/** The server's contendedOutputBytesPerSecond (0: off); unset: the server's default. */
const OUTPUT_RATE = process.env.WARDEN_BENCH_NOISY_OUTPUT_RATE;

async function tarOf(name: string, content: string): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name, type: "file", mode: 0o644 }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export const noisyNeighbourSection: BenchSection = {
  name: "noisy-neighbour",
  description:
    "warden serve: tenant B's bash p99 idle vs while tenant A sends the worst inputs the limits allow",
  async run(): Promise<BenchRow[]> {
    for (const [name, value] of [
      ["WARDEN_BENCH_NOISY_SAMPLES", SAMPLES],
      ["WARDEN_BENCH_NOISY_ROUNDS", ROUNDS],
      ["WARDEN_BENCH_NOISY_LOOPS", LOOPS],
    ] as const)
      if (!Number.isInteger(value) || value < 1)
        throw new Error(`${name} is ${JSON.stringify(process.env[name])}; set a whole number of 1 or more.`);
    if (!Number.isInteger(B_INTERVAL_MS) || B_INTERVAL_MS < 0)
      throw new Error(
        `WARDEN_BENCH_NOISY_B_INTERVAL_MS is ${JSON.stringify(process.env.WARDEN_BENCH_NOISY_B_INTERVAL_MS)}; set a whole number of ms, 0 or more.`,
      );
    const dir = await mkdtemp(join(tmpdir(), "warden-bench-noisy-"));
    const suffix = randomBytes(3).toString("hex");
    const A = { id: `bench-noisy-a-${suffix}`, key: `ka-${suffix}` };
    const B = { id: `bench-noisy-b-${suffix}`, key: `kb-${suffix}` };
    const quotas = {
      maxSessions: 2,
      maxConcurrentToolCalls: 8,
      cpus: 1,
      memoryBytes: 536870912,
      workspaceBytes: 268435456,
    };
    const config = {
      port: 0,
      stateDir: "state",
      jsonBodyLimitBytes: BODY_LIMIT,
      ...(OUTPUT_RATE === undefined ? {} : { contendedOutputBytesPerSecond: Number(OUTPUT_RATE) }),
      tenants: [A, B].map((t) => ({ id: t.id, keys: [{ id: "k", sha256: hashKey(t.key) }], quotas })),
    };
    const server = forkChild("./noisy-server.js");
    const serverPid = server.pid;
    const askServer = <T extends FromServer["type"]>(message: ToServer, type: T) =>
      ask<FromServer, T>(server, message, type);
    let child: ChildProcess | undefined;
    const { url } = await askServer({ type: "start", config, dir }, "started").catch(async (err) => {
      letGo(server);
      await rm(dir, { recursive: true, force: true });
      throw err;
    });
    const api = (key: string, path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers },
      });
    const call = async (key: string, id: string, toolCalls: unknown[]) => {
      const res = await api(key, `/v1/sessions/${id}/tool-calls`, {
        method: "POST",
        body: JSON.stringify({ toolCalls }),
      });
      const body = (await res.json()) as { results?: { isError: boolean; content: { text?: string }[] }[] };
      return { status: res.status, body };
    };
    try {
      const oldText = linesOf("old");
      const newText = linesOf("new");
      const upload = await api(A.key, "/v1/sessions", {
        method: "POST",
        headers: { "content-type": "application/x-tar" },
        body: await tarOf("big.txt", oldText),
      });
      if (upload.status !== 201)
        throw new Error(`A's upload failed: ${upload.status} ${await upload.text()}`);
      const a = ((await upload.json()) as { id: string }).id;
      const b = (
        (await (await api(B.key, "/v1/sessions", { method: "POST", body: "{}" })).json()) as { id: string }
      ).id;
      // A: big.txt rewritten (12,000 lines, for /changes), e<n>.txt per loop to edit back and forth.
      await call(A.key, a, [{ id: "w", name: "write", arguments: { path: "big.txt", content: newText } }]);
      for (let n = 0; n < LOOPS; n++)
        await call(A.key, a, [
          { id: "w", name: "write", arguments: { path: `e${n}.txt`, content: oldText } },
        ]);
      const tenantA = forkChild("./noisy-tenant.js");
      child = tenantA;
      const askTenant = <T extends FromTenant["type"]>(message: ToTenant, type: T) =>
        ask<FromTenant, T>(tenantA, message, type);
      // Who uses the CPU in each block (cpu-attribution.ts): the tenants' containers, A's client, the engine.
      const targets = {
        tenants: { A: A.id, B: B.id },
        processes: {
          "tenant B client and the CPU sampling (the bench's process)": process.pid,
        } as Record<string, number>,
        ...(serverPid === undefined ? {} : { serverPid }),
      };
      const { priority } = await askTenant(
        {
          type: "init",
          url,
          key: A.key,
          session: a,
          loops: LOOPS,
          bodyLimit: BODY_LIMIT,
        },
        "ready",
      );
      if (tenantA.pid !== undefined) targets.processes[`tenant A client (${priority})`] = tenantA.pid;

      let callsOfB = 0;
      /** One `bash true` of B: its tool call id (for the audit log's timings) and its latency, ms. */
      const bashTrue = async () => {
        const id = `b${callsOfB++}`;
        const t0 = performance.now();
        const r = await call(B.key, b, [{ id, name: "bash", arguments: { command: "true" } }]);
        if (r.status !== 200 || r.body.results?.[0]?.isError) throw new Error(`B's bash failed: ${r.status}`);
        return { id, ms: performance.now() - t0 };
      };
      for (let i = 0; i < 5; i++) await bashTrue();

      /** Prints who used the CPU in a block (ms per s), with the load average at its end. */
      const printCpu = (label: string, shares: CpuShare[], bCallsPerSecond?: number) =>
        console.error(
          [
            `noisy-neighbour: CPU ms ${bCallsPerSecond === undefined ? "" : "per s, "}${label} (${bCallsPerSecond === undefined ? "" : `B ${bCallsPerSecond.toFixed(0)} calls/s, `}load average ${loadavg()[0]?.toFixed(2)}):`,
            ...shares.map((s) => `  ${s.ms.toFixed(0).padStart(5)}  ${s.name}`),
          ].join("\n"),
        );

      /**
       * B's samples, the server's event loop's largest delay (the direct measure of a blocked loop)
       * and its main thread's CPU (ms/s) over SAMPLES calls.
       */
      const sampleB = async (label: string) => {
        const cpu = await startCpuAttribution(targets);
        await askServer({ type: "loop-delay" }, "loop-delay");
        const cpu0 = mainThreadCpuMs(serverPid);
        const t0 = performance.now();
        const samples: number[] = [];
        const ids: string[] = [];
        for (let i = 0; i < SAMPLES; i++) {
          const wait = t0 + i * B_INTERVAL_MS - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const { id, ms } = await bashTrue();
          samples.push(ms);
          ids.push(id);
        }
        const wallMs = performance.now() - t0;
        const cpuMs = mainThreadCpuMs(serverPid) - cpu0;
        printCpu(label, cpu.stop(16), (SAMPLES / wallMs) * 1000);
        return {
          samples,
          ids,
          loopMaxMs: (await askServer({ type: "loop-delay" }, "loop-delay")).maxMs,
          cpuPerSecondMs: (cpuMs / wallMs) * 1000,
        };
      };
      /** B's samples while A runs `kinds` in LOOPS parallel loops (in its own process). */
      const underLoad = async (label: string, kinds: LoadKind[]) => {
        await askTenant({ type: "start", kinds }, "started");
        await new Promise((r) => setTimeout(r, 300));
        const measured = await sampleB(`A sending ${label}`);
        const report = await askTenant({ type: "stop" }, "stopped");
        return { ...measured, report };
      };
      const phases: Array<[string, LoadKind[]]> = [
        ["edits", ["edit"]],
        ["/changes", ["changes"]],
        ["longest command", ["long"]],
        ["output flood", ["flood"]],
        ["all four", [...LOAD_KINDS]],
      ];
      const run = ONLY
        ? phases.filter(([, kinds]) => kinds.length === 1 && ONLY.includes(kinds[0]!))
        : phases;
      // What one call of each load costs the machine, by consumer: A's calls one after another, B
      // idle. CPU per call does not depend on how busy the machine is, unlike the latencies below.
      if (COST_CALLS > 0)
        for (const [label, kinds] of run) {
          const kind = kinds.length === 1 ? kinds[0] : undefined;
          if (kind === undefined) continue;
          const calls = kind === "flood" ? Math.min(COST_CALLS, 3) : COST_CALLS;
          const cpu = await startCpuAttribution(targets);
          const done = await askTenant({ type: "burst", kind, count: calls }, "burst-done");
          printCpu(
            `per A call: ${label}, ${calls} calls one after another (${done.statuses.join(", ")})`,
            cpu.stop(16, calls),
          );
        }
      // Idle and loaded blocks alternate within each phase, ROUNDS times (idle, loaded, idle, …),
      // and a phase's loaded p99 is compared with the p99 of its own idle blocks: the machine's
      // speed drifts during a run (B's idle blocks ran at 105 to 278 calls/s in earlier runs), and
      // blocks next to each other see the same machine. The whole run's idle p99 is printed too.
      type Block = Awaited<ReturnType<typeof sampleB>>;
      const merged = (blocks: Block[]): Block => ({
        samples: blocks.flatMap((b) => b.samples),
        ids: blocks.flatMap((b) => b.ids),
        loopMaxMs: Math.max(...blocks.map((b) => b.loopMaxMs)),
        cpuPerSecondMs: blocks.reduce((sum, b) => sum + b.cpuPerSecondMs, 0) / blocks.length,
      });
      const measured: Array<{ label: string; idle: Block; loaded: Block; aCalls: number }> = [];
      let last: Extract<FromTenant, { type: "stopped" }> | undefined;
      const callsSoFar = (r?: typeof last) => LOAD_KINDS.reduce((n, k) => n + (r?.timings[k].length ?? 0), 0);
      for (const [label, kinds] of run) {
        const before = callsSoFar(last);
        const idleBlocks: Block[] = [];
        const loadedBlocks: Block[] = [];
        for (let round = 1; round <= ROUNDS; round++) {
          const of = `${label}, round ${round}/${ROUNDS}`;
          await new Promise((r) => setTimeout(r, 300));
          idleBlocks.push(await sampleB(`idle, ${of}`));
          const loaded = await underLoad(of, kinds);
          loadedBlocks.push(loaded);
          last = loaded.report;
        }
        // How much load A got through in this phase (its calls are slower when its work waits for
        // the cores), so runs and versions can be compared at the load they really had.
        const aCalls = callsSoFar(last) - before;
        measured.push({ label, idle: merged(idleBlocks), loaded: merged(loadedBlocks), aCalls });
      }
      const idle = merged(measured.map((m) => m.idle));
      const perPhase = SAMPLES * ROUNDS;
      printTails(join(dir, "state", "audit.jsonl"), B.id, [
        ["idle, whole run", idle],
        ...measured.map((m): [string, Block] => [`A sending ${m.label}`, m.loaded]),
      ]);
      const loadRows: BenchRow[] = [];
      for (const { label, idle: quiet, loaded, aCalls } of measured) {
        loadRows.push(
          { name: `A calls completed, A sending ${label}`, value: aCalls, unit: "count" },
          {
            name: `B bash true p99 (n=${perPhase}), A sending ${label}${label === "all four" ? " (target <= 2x)" : ""}`,
            value: percentile(loaded.samples, 99),
            unit: "ms",
            baseline: percentile(quiet.samples, 99),
            baselineName: `idle p99 of the same rounds (n=${perPhase})`,
          },
          {
            name: `event loop delay max, A sending ${label}`,
            value: loaded.loopMaxMs,
            unit: "ms",
            baseline: quiet.loopMaxMs,
            baselineName: "idle max of the same rounds",
          },
        );
        // How busy the server's main thread (the event loop) was: CPU ms per second of the blocks.
        if (Number.isFinite(loaded.cpuPerSecondMs))
          loadRows.push({
            name: `server main-thread CPU per s, A sending ${label}`,
            value: loaded.cpuPerSecondMs,
            unit: "ms",
            baseline: quiet.cpuPerSecondMs,
            baselineName: "idle, same rounds",
          });
      }

      const aRows: BenchRow[] = [];
      const labels: Record<LoadKind, string> = {
        edit: `edit ${LINES} lines -> ${LINES} others`,
        changes: `GET /changes, ${LINES}-line rewrite`,
        long: `bash, ${Math.round((last?.longCommandBytes ?? 0) / 1024)} KiB command`,
        flood: "bash, 64 MiB output",
      };
      for (const kind of LOAD_KINDS) {
        const timings = last?.timings[kind] ?? [];
        if (timings.length === 0) continue;
        console.error(`noisy-neighbour: A ${kind}: ${last?.statuses[kind].join(", ")}`);
        aRows.push({
          name: `A ${labels[kind]} p50 (${timings.length} calls)`,
          value: percentile(timings, 50),
          unit: "ms",
        });
      }
      return [
        {
          name: `B bash true p50 idle, whole run (n=${idle.samples.length})`,
          value: percentile(idle.samples, 50),
          unit: "ms",
        },
        {
          name: `B bash true p99 idle, whole run (n=${idle.samples.length})`,
          value: percentile(idle.samples, 99),
          unit: "ms",
        },
        { name: "server main-thread CPU per s, idle", value: idle.cpuPerSecondMs, unit: "ms" },
        { name: "event loop delay max idle", value: idle.loopMaxMs, unit: "ms" },
        ...loadRows,
        ...aRows,
      ];
    } finally {
      letGo(child);
      // The server removes both tenants' containers as it stops; if its process died, they are removed here.
      const stopped = await askServer({ type: "stop" }, "stopped").then(
        () => true,
        () => false,
      );
      letGo(server);
      if (!stopped) await removeTenantContainers([A.id, B.id]);
      await rm(dir, { recursive: true, force: true });
    }
  },
};
