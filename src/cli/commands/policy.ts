/**
 * `warden policy check FILE...`: validates each policy file and runs its own `tests:` section,
 * printing every error of a file at once, rules that never decide (shadowed), and each failure; exit 1 when any test fails, 2 when a file is invalid.
 * `warden policy explain FILE <tool> '<json>' [--layer FILE...]`: prints
 * the decision and its trail (each command part or path and the rule that matched). Paths are
 * resolved lexically (normalizeToolPath), not inside a sandbox: symlinks are not followed here.
 */
import type { Command } from "commander";
import { InvalidArgumentError, PolicyInvalidError } from "../../errors.js";
import type { Decision } from "../../policy/index.js";
import { evaluate, lexicalContext, loadPolicy, runPolicyTests } from "../../policy/index.js";
import { jsonParseReason, terminalSafeLine as shown, terminalSafe } from "../../util/index.js";

function parseArgsJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(
      `Tool arguments are not valid JSON (${jsonParseReason(err)}). Example: warden policy explain policies/default.yaml bash '{"command":"git status"}'.`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`Tool arguments must be a JSON object, got ${JSON.stringify(value)}.`);
  }
  return value as Record<string, unknown>;
}

/**
 * The explain output: the decision line, then one line per trail entry, except that the arguments
 * no path rule matched share one line (they are words that may name files, not known paths). Parts, reasons and rule
 * names are shown with control and bidi characters escaped (terminalSafeLine): they hold the
 * command's text, which may come from a model.
 */
export function formatDecision(decision: Decision): string {
  const head = [
    `decision: ${decision.decision}`,
    decision.ruleId
      ? `rule: ${shown(decision.ruleId)}${decision.layer ? ` (${shown(decision.layer)})` : ""}`
      : "rule: (none)",
    decision.part ? `part: ${shown(decision.part)}` : "",
    decision.reason ? `reason: ${shown(decision.reason)}` : "",
  ].filter((l) => l !== "");
  const trail: string[] = [];
  const unmatched: string[] = [];
  for (const e of decision.trail) {
    // Arguments no path rule matched: one line. Each is only a word that may name a file (`status`
    // of `git status`, the `f` of `-rf`), so listing each as a path of its own misleads.
    if (e.kind === "argument" && e.decision === "allow" && !e.ruleId) {
      if (unmatched.length === 0) trail.push("");
      unmatched.push(shown(e.part));
      continue;
    }
    const rule = e.ruleId ? ` [${shown(e.ruleId)}${e.layer ? ` @${shown(e.layer)}` : ""}]` : "";
    const via = e.via?.length ? ` (via ${shown(e.via.join(" > "))})` : "";
    const reason = e.reason ? ` — ${shown(e.reason)}` : "";
    trail.push(`  ${e.decision.padEnd(5)} ${e.kind.padEnd(7)} ${shown(e.part)}${via}${rule}${reason}`);
  }
  const at = trail.indexOf("");
  if (at !== -1)
    trail[at] =
      `  allow argument words that may name files: ${unmatched.join(", ")} — no deny or ask path rule ` +
      "matches them (each word that may be a path counts, a subcommand and an option's attached value too: -rf may be -r f)";
  return [
    ...head,
    "trail:",
    ...trail,
    "(paths resolved lexically; symlinks are not followed by explain)",
  ].join("\n");
}

/**
 * `warden policy check`: loads and tests each file. Messages quote the file's own text (a test's
 * command, a key), which may come from a workspace's policy layer, so control characters are shown
 * escaped (terminalSafe; multi-line messages keep their newlines).
 */
async function check(files: string[]): Promise<void> {
  let failed = 0;
  let invalid = 0;
  for (const file of files) {
    let policy: Awaited<ReturnType<typeof loadPolicy>>;
    try {
      policy = await loadPolicy([file]);
    } catch (err) {
      if (!(err instanceof PolicyInvalidError)) throw err;
      console.error(`INVALID ${terminalSafe(err.message)}`);
      invalid++;
      continue;
    }
    const layer = policy.layers[0];
    if (!layer) continue;
    for (const finding of layer.findings ?? []) console.error(`WARN ${terminalSafe(finding)}`);
    const report = await runPolicyTests(layer);
    for (const f of report.failures) console.error(`FAIL ${file}: ${terminalSafe(f.message)}`);
    const tests = report.passed + report.failures.length;
    const note = tests === 0 ? " (no tests: add a tests: section)" : "";
    console.log(
      `${report.failures.length === 0 ? "ok" : "FAILED"} ${file}: ${report.passed}/${tests} tests passed${note}`,
    );
    failed += report.failures.length;
  }
  if (invalid > 0) process.exitCode = 2;
  else if (failed > 0) process.exitCode = 1;
}

async function explain(file: string, tool: string, argsText: string, extra: string[]): Promise<void> {
  const policy = await loadPolicy([file, ...extra]);
  const decision = await evaluate(policy, { tool, args: parseArgsJson(argsText) }, lexicalContext);
  console.log(formatDecision(decision));
}

/** Registers `warden policy check` and `warden policy explain`. */
export function registerPolicy(program: Command): void {
  const policy = program.command("policy").description("Check and explain allow / ask / deny policy files");
  policy
    .command("check")
    .description("Validate policy files and run each file's tests: section (exit 1 on a failed test)")
    .argument("<files...>", "policy files (YAML or JSON)")
    .action(check);
  policy
    .command("explain")
    .description("Print the decision on one tool call and the trail of rules and command parts")
    .argument("<file>", "policy file (the highest layer)")
    .argument("<tool>", "tool name, e.g. bash")
    .argument("<json>", 'the tool arguments as JSON, e.g. \'{"command":"git status"}\'')
    .option("--layer <files...>", "lower layers to add after FILE, highest first")
    .action(async (file: string, tool: string, json: string, flags: { layer?: string[] }) => {
      await explain(file, tool, json, flags.layer ?? []);
    });
}
