/**
 * Noisy neighbour section (issue 11): `warden serve` in-process on the real engine with two tenants.
 * Tenant B's `bash true` latency is measured idle (the baseline), then again while tenant A sends the
 * worst inputs the body limits allow, in WARDEN_BENCH_NOISY_LOOPS parallel loops (default 2): an
 * `edit` replacing 12,000 lines with 12,000 different ones, GET /changes of a rewritten 12,000-line
 * file, the longest bash command the JSON body limit allows, and a 64 MiB output flood. The ratio
 * of B's p99 under load to its idle p99 is the figure (target <= 2x). A's own calls are reported too,
 * with their HTTP statuses (a clear 4xx for the long command is fine).
 * Each load is also run alone, to tell which one costs; the server runs in this process, so the
 * event loop's largest delay in each phase (monitorEventLoopDelay) is reported too: it does not
 * depend on the engine's own latency, which varies a lot on a shared machine.
 * Samples of B per phase: WARDEN_BENCH_NOISY_SAMPLES (default 40).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import tar from "tar-stream";
import { hashKey } from "../../src/server/auth.js";
import { resolveServerConfig } from "../../src/server/config.js";
import { createDockerBackend } from "../../src/server/docker-backend.js";
import { startServer } from "../../src/server/server.js";
import { type BenchRow, type BenchSection, percentile } from "../harness.js";

const SAMPLES = Number(process.env.WARDEN_BENCH_NOISY_SAMPLES ?? 40);
const LOOPS = Number(process.env.WARDEN_BENCH_NOISY_LOOPS ?? 2);
const LINES = 12_000;
const BODY_LIMIT = 1024 * 1024;

const lines = (word: string) =>
  Array.from({ length: LINES }, (_, i) => `${word} line ${i} of the file\n`).join("");

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
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        jsonBodyLimitBytes: BODY_LIMIT,
        tenants: [A, B].map((t) => ({ id: t.id, keys: [{ id: "k", sha256: hashKey(t.key) }], quotas })),
      },
      dir,
    );
    const server = await startServer({ config, backend: createDockerBackend(), onExit: "close" });
    const api = (key: string, path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, {
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
      const oldText = lines("old");
      const newText = lines("new");
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

      const bashTrue = async () => {
        const t0 = performance.now();
        const r = await call(B.key, b, [{ id: "t", name: "bash", arguments: { command: "true" } }]);
        if (r.status !== 200 || r.body.results?.[0]?.isError) throw new Error(`B's bash failed: ${r.status}`);
        return performance.now() - t0;
      };
      // The server runs in this process: the event loop's delay is the direct measure of a blocked loop.
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      for (let i = 0; i < 5; i++) await bashTrue();
      loopDelay.reset();
      const idle: number[] = [];
      for (let i = 0; i < SAMPLES; i++) idle.push(await bashTrue());
      const idleLoopMaxMs = loopDelay.max / 1e6;

      const timings: Record<string, number[]> = { edit: [], changes: [], long: [], flood: [] };
      const statuses: Record<string, Set<string>> = {
        edit: new Set(),
        changes: new Set(),
        long: new Set(),
        flood: new Set(),
      };
      const timed = async (what: string, run: () => Promise<string>) => {
        const t0 = performance.now();
        const status = await run().catch((err: unknown) => `threw ${String(err).slice(0, 80)}`);
        timings[what]!.push(performance.now() - t0);
        statuses[what]!.add(status);
      };
      const toolStatus = (r: Awaited<ReturnType<typeof call>>) => {
        const first = r.body.results?.[0];
        return first?.isError
          ? `${r.status} isError: ${first.content[0]?.text?.slice(0, 160)}`
          : `${r.status}`;
      };
      // The longest command the JSON body allows: `true a a a …` up to the limit less the envelope.
      const envelope = JSON.stringify({
        toolCalls: [{ id: "l", name: "bash", arguments: { command: "" } }],
      }).length;
      const longCommand = `true${" a".repeat(Math.floor((BODY_LIMIT - envelope - 4) / 2))}`;
      // Each loop's edit file alternates old -> new -> old, so every edit is a full rewrite.
      const holdsOld = Array.from({ length: LOOPS }, () => true);
      const ops: Record<string, (n: number) => Promise<void>> = {
        edit: (n) =>
          timed("edit", async () => {
            const forward = holdsOld[n] === true;
            const edits = [forward ? { oldText, newText } : { oldText: newText, newText: oldText }];
            const r = await call(A.key, a, [
              { id: "e", name: "edit", arguments: { path: `e${n}.txt`, edits } },
            ]);
            if (r.status === 200 && !r.body.results?.[0]?.isError) holdsOld[n] = !forward;
            return toolStatus(r);
          }),
        changes: () =>
          timed("changes", async () => {
            const res = await api(A.key, `/v1/sessions/${a}/changes`);
            await res.arrayBuffer();
            return String(res.status);
          }),
        long: () =>
          timed("long", async () =>
            toolStatus(
              await call(A.key, a, [{ id: "l", name: "bash", arguments: { command: longCommand } }]),
            ),
          ),
        flood: () =>
          timed("flood", async () =>
            toolStatus(
              await call(A.key, a, [
                { id: "f", name: "bash", arguments: { command: "head -c 67108864 /dev/zero | tr '\\0' x" } },
              ]),
            ),
          ),
      };
      /** B's samples while A runs `kinds` in LOOPS parallel loops. */
      const underLoad = async (kinds: string[]) => {
        let loading = true;
        const noisy = async (n: number) => {
          while (loading) for (const kind of kinds) await ops[kind]!(n);
        };
        const loops = Array.from({ length: LOOPS }, (_, n) => noisy(n));
        await new Promise((r) => setTimeout(r, 300));
        loopDelay.reset();
        const samples: number[] = [];
        for (let i = 0; i < SAMPLES; i++) samples.push(await bashTrue());
        const loopMaxMs = loopDelay.max / 1e6;
        loading = false;
        await Promise.all(loops);
        return { samples, loopMaxMs };
      };
      const phases: Array<[string, string[]]> = [
        ["edits", ["edit"]],
        ["/changes", ["changes"]],
        ["longest command", ["long"]],
        ["output flood", ["flood"]],
        ["all four", ["edit", "changes", "long", "flood"]],
      ];
      const loadRows: BenchRow[] = [];
      const idleP99 = percentile(idle, 99);
      for (const [label, kinds] of phases) {
        const loaded = await underLoad(kinds);
        loadRows.push(
          {
            name: `B bash true p99, A sending ${label}${label === "all four" ? " (target <= 2x)" : ""}`,
            value: percentile(loaded.samples, 99),
            unit: "ms",
            baseline: idleP99,
            baselineName: "idle p99",
          },
          {
            name: `event loop delay max, A sending ${label}`,
            value: loaded.loopMaxMs,
            unit: "ms",
            baseline: idleLoopMaxMs,
            baselineName: "idle max",
          },
        );
      }

      for (const [what, set] of Object.entries(statuses))
        console.error(`noisy-neighbour: A ${what}: ${[...set].join(", ")}`);
      const aRow = (what: string, label: string): BenchRow => ({
        name: `A ${label} p50 (${timings[what]!.length} calls)`,
        value: percentile(timings[what]!, 50),
        unit: "ms",
      });
      return [
        { name: "B bash true p50 idle", value: percentile(idle, 50), unit: "ms" },
        { name: "B bash true p99 idle", value: idleP99, unit: "ms" },
        { name: "event loop delay max idle", value: idleLoopMaxMs, unit: "ms" },
        ...loadRows,
        aRow("edit", `edit ${LINES} lines -> ${LINES} others`),
        aRow("changes", `GET /changes, ${LINES}-line rewrite`),
        aRow("long", `bash, ${Math.round(longCommand.length / 1024)} KiB command`),
        aRow("flood", "bash, 64 MiB output"),
      ];
    } finally {
      await server.shutdown(0);
      await rm(dir, { recursive: true, force: true });
    }
  },
};
