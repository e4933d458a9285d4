/**
 * Processes section (issue 41): what a background process costs to start and to read, against the
 * foreground paths in the same sandbox and run: a start (spawn of its shim) against `exec true`, and
 * reading its 8 MiB of kept output in 64 KiB pieces (each read looks up the process's state and its
 * segments) against reading the same bytes from a file with readFile in the same pieces.
 */
import { randomBytes } from "node:crypto";
import { openProcesses } from "../../src/process/index.js";
import { createSandbox } from "../../src/sandbox/index.js";
import { type BenchRow, type BenchSection, percentile, timeRuns } from "../harness.js";

const STARTS = Number(process.env.WARDEN_BENCH_PROCESS_STARTS ?? 20);
const OUTPUT_BYTES = 8 * 1024 * 1024;
const PIECE = 64 * 1024;

export const processesSection: BenchSection = {
  name: "processes",
  description: "background process start and output reads, against exec and readFile in the same sandbox",
  async run(): Promise<BenchRow[]> {
    const sandbox = await createSandbox({
      tenant: `bench-${randomBytes(3).toString("hex")}`,
      ttlMs: 3_600_000,
    });
    try {
      const processes = await openProcesses(sandbox, { limits: { maxRunning: 8, maxExited: STARTS + 4 } });
      await sandbox.exec({ argv: ["true"] });
      const starts: number[] = [];
      const execs: number[] = [];
      // Interleaved so both paths see the same load.
      for (let i = 0; i < STARTS; i++) {
        execs.push(...(await timeRuns(1, () => sandbox.exec({ argv: ["true"] }))));
        starts.push(...(await timeRuns(1, () => processes.start({ command: { argv: ["true"] } }))));
      }
      const big = await processes.start({ command: { shell: `head -c ${OUTPUT_BYTES} /dev/zero` } });
      await processes.wait(big.id, { timeoutMs: 60_000 });
      await sandbox.exec({ shell: `head -c ${OUTPUT_BYTES} /dev/zero > /tmp/bench-output` });
      const readOutput = await timeRuns(3, async () => {
        for (let offset = 0; offset < OUTPUT_BYTES; ) {
          offset = (await processes.read(big.id, { offset, maxBytes: PIECE })).nextOffset;
        }
      });
      const readFile = await timeRuns(3, async () => {
        for (let offset = 0; offset < OUTPUT_BYTES; offset += PIECE) {
          await sandbox.readFile("/tmp/bench-output", { kind: "bytes", offset, length: PIECE });
        }
      });
      return [
        {
          name: "start p50",
          unit: "ms",
          value: percentile(starts, 50),
          baseline: percentile(execs, 50),
          baselineName: "exec true",
        },
        {
          name: "read 8 MiB of output in 64 KiB pieces p50",
          unit: "ms",
          value: percentile(readOutput, 50),
          baseline: percentile(readFile, 50),
          baselineName: "readFile of the same bytes",
        },
      ];
    } finally {
      await sandbox.destroy();
    }
  },
};
