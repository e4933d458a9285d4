/**
 * The benchmark harness: named sections, each returning rows; every row that has a baseline
 * measured in the same run carries the ratio value/baseline. Add a section by writing
 * bench/sections/<name>.ts and listing it in bench/sections/index.ts.
 */
import { performance } from "node:perf_hooks";

/** One measurement. `baseline` is the same quantity for the reference path, measured in the same run. */
export interface BenchRow {
  name: string;
  value: number;
  unit: "ms" | "KiB" | "MiB" | "ops/s" | "count";
  baseline?: number;
  /** What the baseline is (e.g. "raw dockerode"). */
  baselineName?: string;
  /**
   * Printed after the value: what limits it (a run capped below the size asked for) or, with a NaN
   * value, why there is no measurement (e.g. "not available: …").
   */
  note?: string;
}

/** A named group of measurements. */
export interface BenchSection {
  name: string;
  description: string;
  run(): Promise<BenchRow[]>;
}

/** The p-th percentile (0..100, nearest rank) of `samples`. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/**
 * The name of the p99 row of `n` samples, saying when it is only the largest one: with the nearest
 * rank (percentile above) that is every n below 100.
 */
export function p99Name(what: string, n: number): string {
  return n < 100 ? `${what} p99 (= max of ${n})` : `${what} p99 (n=${n})`;
}

/** Runs `fn` `count` times in sequence and returns each duration in ms. */
export async function timeRuns(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** Formats rows as an aligned text table: section, name, value ("-" for NaN), baseline, ratio, note. */
export function formatRows(section: string, rows: readonly BenchRow[]): string {
  const lines = rows.map((r) => {
    const value = Number.isNaN(r.value) ? "-" : `${r.value.toFixed(1)} ${r.unit}`;
    const base =
      r.baseline === undefined ? "" : `${r.baseline.toFixed(1)} ${r.unit} (${r.baselineName ?? "baseline"})`;
    const ratio =
      r.baseline === undefined || r.baseline === 0 || Number.isNaN(r.value)
        ? ""
        : `${(r.value / r.baseline).toFixed(2)}x`;
    return [section, r.name, value, base, ratio, r.note ?? ""];
  });
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...lines.map((l) => (l[i] ?? "").length), 0));
  return lines
    .map((l) =>
      l
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
