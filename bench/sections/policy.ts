/**
 * Policy section (issue 4): evaluation of typical bash commands under policies/default.yaml, after
 * the parser has loaded (target p50 <= 1 ms). Baseline: the bare tree-sitter parse of the same
 * commands (the floor evaluation cannot beat), measured in the same run. Paths resolve lexically.
 * Run from the repository root (npm run bench), where policies/ is.
 * Rounds: WARDEN_BENCH_POLICY_ROUNDS (default 5000).
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { withBashTree } from "../../src/policy/bash-parser.js";
import { evaluate, lexicalContext, loadBashParser, loadPolicy } from "../../src/policy/index.js";
import { type BenchRow, type BenchSection, percentile, timeRuns } from "../harness.js";

const ROUNDS = Number(process.env.WARDEN_BENCH_POLICY_ROUNDS ?? 5000);
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
    ];
  },
};
