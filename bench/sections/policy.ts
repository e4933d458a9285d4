/**
 * Policy section (issue 4): evaluation of typical bash commands under policies/default.yaml, after
 * the parser has loaded (target p50 <= 1 ms). Baseline: the bare tree-sitter parse of the same
 * commands (the floor evaluation cannot beat), measured in the same run. Paths resolve lexically.
 * Run from the repository root (npm run bench), where policies/ is.
 * Rounds: WARDEN_BENCH_POLICY_ROUNDS (default 5000).
 *
 * Commands at the limit (issue 11, item 2): evaluation of a command of exactly the default
 * maxCommandBytes, in the shape with the most parts per byte (`a;a;…`, one simple command per two
 * bytes) and as a here-doc (one part); target well under 100 ms. Rounds: WARDEN_BENCH_POLICY_LIMIT_ROUNDS
 * (default 30).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { withBashTree } from "../../src/policy/bash/parser.js";
import {
  DEFAULT_MAX_COMMAND_BYTES,
  evaluate,
  lexicalContext,
  loadBashParser,
  loadPolicy,
} from "../../src/policy/index.js";
import { type BenchRow, type BenchSection, percentile, timeRuns } from "../harness.js";

const ROUNDS = Number(process.env.WARDEN_BENCH_POLICY_ROUNDS ?? 5000);
const LIMIT_ROUNDS = Number(process.env.WARDEN_BENCH_POLICY_LIMIT_ROUNDS ?? 30);
/** A script of exactly `bytes` bytes made of one-letter commands: the most parts per byte. */
const manyParts = (bytes: number) => "a;".repeat(bytes / 2).slice(0, bytes);
/** A here-doc writing a file, of exactly `bytes` bytes. */
function hereDoc(bytes: number): string {
  const head = "cat > /workspace/notes.txt <<'EOF'\n";
  const tail = "\nEOF";
  return (
    head + "lorem ipsum dolor sit amet\n".repeat(bytes).slice(0, bytes - head.length - tail.length) + tail
  );
}
const COMMANDS = [
  "git status",
  "npm test",
  "ls -la 2>/dev/null",
  "grep -rn foo src | head -n 20",
  "git status && rm -rf src",
  "find . -name '*.ts' -exec wc -l {} +",
];

export const policySection: BenchSection = {
  name: "policy",
  description: "policy evaluation of typical bash commands (default.yaml) vs the bare parse",
  async run(): Promise<BenchRow[]> {
    const t0 = performance.now();
    await loadBashParser();
    const loadMs = performance.now() - t0;
    const policy = await loadPolicy([join(process.cwd(), "policies/default.yaml")]);
    const call = (i: number) => ({ tool: "bash", args: { command: COMMANDS[i % COMMANDS.length] } });
    // Warm up the JIT and the pattern caches.
    await timeRuns(1000, (i) => evaluate(policy, call(i), lexicalContext));
    const parse = await timeRuns(ROUNDS, async (i) =>
      withBashTree(COMMANDS[i % COMMANDS.length] as string, (root) => root.childCount),
    );
    const evaluated = await timeRuns(ROUNDS, (i) => evaluate(policy, call(i), lexicalContext));
    const single = await timeRuns(ROUNDS, () => evaluate(policy, call(0), lexicalContext));
    const atLimit = async (command: string) => {
      if (Buffer.byteLength(command) !== DEFAULT_MAX_COMMAND_BYTES) throw new Error("bench command size");
      const args = { tool: "bash", args: { command } };
      return percentile(await timeRuns(LIMIT_ROUNDS, () => evaluate(policy, args, lexicalContext)), 50);
    };
    const limitKiB = DEFAULT_MAX_COMMAND_BYTES / 1024;
    const manyMs = await atLimit(manyParts(DEFAULT_MAX_COMMAND_BYTES));
    const hereDocMs = await atLimit(hereDoc(DEFAULT_MAX_COMMAND_BYTES));
    // The harness prints one decimal; these are tens of microseconds, so rows are in µs ("count").
    const us = (samples: number[], p: number) => percentile(samples, p) * 1000;
    const base = { baseline: us(parse, 50), baselineName: "bare parse p50, µs" };
    return [
      { name: "parser load (once per process)", value: loadMs, unit: "ms" },
      {
        name: "evaluate typical bash p50, µs (target <= 1000)",
        value: us(evaluated, 50),
        unit: "count",
        ...base,
      },
      { name: "evaluate typical bash p99, µs", value: us(evaluated, 99), unit: "count", ...base },
      { name: "evaluate `git status` p50, µs", value: us(single, 50), unit: "count", ...base },
      {
        name: `evaluate ${limitKiB} KiB of \`a;a;…\` (at maxCommandBytes) p50 (target < 100 ms)`,
        value: manyMs,
        unit: "ms",
      },
      { name: `evaluate a ${limitKiB} KiB here-doc (at maxCommandBytes) p50`, value: hereDocMs, unit: "ms" },
    ];
  },
};
