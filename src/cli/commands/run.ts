/**
 * `warden run --task "…"`: an agent loop on any OpenAI-compatible model, every tool call in a sandboxed
 * session, and a review of the change before anything reaches the host (copy mode: summary, saved patch,
 * `--export-patch`, `--apply` after confirmation). Without `--policy` the shipped default policy
 * applies (../flags/policy-choice.ts); the transcript records the policy (files and digest, or allow-all). Exit 0 final answer, 1 stopped at --max-turns or
 * --apply refused, 2 configuration, provider or engine errors, 130 interrupted (the changes made so
 * far are saved as the run's patch, never applied; the session is closed and its container removed in
 * every case).
 */
import { resolve } from "node:path";
import { type Command, InvalidArgumentError as CommanderArgumentError } from "commander";
import {
  approvalFor,
  confirmer,
  createRunLogger,
  DEFAULT_MAX_TURNS,
  decisionLogger,
  executeRun,
  JsonView,
  loadOpenAI,
  logEvent,
  ModelNotConfiguredError,
  newSessionId,
  OpenAIChatModel,
  type RunView,
  resolveModelConfig,
  reviewStep,
  TerminalView,
  TranscriptWriter,
  transcriptPathFor,
} from "../../agent/index.js";
import { createPolicyHookFromFiles, networkApprover } from "../../policy/index.js";
import type { Session, SessionOptions } from "../../session/index.js";
import { createSession } from "../../session/index.js";
import { omitUndefined } from "../../util/index.js";
import { choosePolicy, policyRecordOf } from "../flags/policy-choice.js";
import { addSessionFlags, type SessionFlags, sessionOptionsOf } from "../flags/session-flags.js";
import { withInterrupt } from "../session/interrupt.js";

/** The flags of `warden run`, as commander hands them over. */
export interface RunFlags extends SessionFlags {
  task: string;
  model?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  maxTurns: number;
  transcript?: string;
  exportPatch?: string;
  apply?: boolean;
  yes?: boolean;
  json?: boolean;
  logFile?: string;
  nonInteractive?: boolean;
  includeIgnored?: boolean;
}

/** Seams for tests: the session factory. */
export interface RunDependencies {
  createSession: (options: SessionOptions) => Promise<Session>;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CommanderArgumentError("must be a positive integer");
  return n;
}

/** Runs the command; sets process.exitCode (see module doc). */
export async function runRun(flags: RunFlags, deps: RunDependencies = { createSession }): Promise<void> {
  let config: ReturnType<typeof resolveModelConfig>;
  try {
    config = resolveModelConfig(flags);
  } catch (err) {
    if (!(err instanceof ModelNotConfiguredError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  // The openai SDK is an optional package: without it, stop here (PackageMissingError names the
  // install command), before a sandbox is created.
  await loadOpenAI();
  const sessionId = newSessionId();
  const transcriptPath = transcriptPathFor(flags.transcript, sessionId);
  const transcript = new TranscriptWriter(transcriptPath);
  const logger = createRunLogger(flags.logFile);
  const view: RunView = flags.json ? new JsonView(process.stdout) : new TerminalView({ out: process.stdout });
  const say = (text: string) => (flags.json ? process.stderr : process.stdout).write(`${text}\n`);
  const workspace = resolve(flags.workspace ?? process.cwd());
  const policy = choosePolicy(flags.policy);

  const { value: outcome, interrupted } = await withInterrupt(async (signal) => {
    // The policy files also exclude what they deny reading from the copy, and their `network:`
    // sections set the network. An `ask`, of a tool call or of a connection under a network `ask`
    // rule, goes to the same terminal with the same timeout (or is refused, non-interactive).
    const approval = flags.nonInteractive ? undefined : approvalFor(view);
    const sessionOptions = await sessionOptionsOf(
      { ...flags, workspace },
      signal,
      (files) =>
        createPolicyHookFromFiles(files, {
          ...omitUndefined({ approval }),
          nonInteractive: flags.nonInteractive === true || approval === undefined,
          sessionId,
          auditLog: decisionLogger(transcript, logger),
        }),
      policy,
    );
    const approve = networkApprover(approval);
    if (approve && sessionOptions.sandbox?.network?.mode === "allowlist")
      sessionOptions.sandbox.network.approve = approve;
    logger?.info({ event: "run_start", sessionId, model: config.model, baseURL: config.baseURL, workspace });
    try {
      return await executeRun({
        task: flags.task,
        model: new OpenAIChatModel(config),
        sessionOptions: { ...sessionOptions, sessionId },
        createSession: deps.createSession,
        transcript,
        maxTurns: flags.maxTurns,
        includeIgnored: flags.includeIgnored === true,
        policy: await policyRecordOf(policy),
        signal,
        onEvent: (event) => {
          view.handle(event);
          logEvent(logger, event);
        },
      });
    } finally {
      if (view instanceof TerminalView) view.stop();
    }
  });

  if (outcome === undefined) {
    // Interrupted before the loop ran (e.g. while the sandbox was being created): nothing is left behind.
    say(`Interrupted. Transcript: ${transcriptPath}`);
    process.exitCode = 130;
    return;
  }
  const { result, review } = outcome;
  if (result.stopReason === "error") {
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    process.stderr.write(`warden: ${message}\n`);
  }
  let refused = false;
  const mode = flags.mode ?? "copy";
  if (mode !== "copy" && !interrupted) {
    say(
      mode === "rw"
        ? `Workspace mode rw: the tools wrote ${workspace} directly; there is nothing to review or apply.`
        : `Workspace mode ro: ${workspace} was read-only; nothing changed.`,
    );
    if (flags.apply || flags.exportPatch) {
      say("--apply and --export-patch work in copy mode only (the default).");
      refused = flags.apply === true;
    }
  }
  if (review) {
    const step = await reviewStep(
      omitUndefined({
        review,
        interrupted: interrupted || result.stopReason === "aborted",
        transcriptPath,
        exportPatch: flags.exportPatch,
        apply: flags.apply,
        yes: flags.yes,
        confirm: confirmer(),
        say,
        colour: !flags.json && process.stdout.isTTY === true,
      }),
    );
    refused = step.refused !== undefined;
    if (view instanceof JsonView) view.record({ type: "review", ...step, stat: review.stat });
  }
  say(`Transcript: ${transcriptPath} (replay it without a model: warden replay ${transcriptPath})`);
  logger?.info({ event: "run_end", stopReason: result.stopReason, turns: result.turns });
  if (interrupted || result.stopReason === "aborted") process.exitCode = 130;
  else if (result.stopReason === "error") process.exitCode = 2;
  else process.exitCode = result.stopReason === "max_turns" || refused ? 1 : 0;
}

/** Registers `warden run`. */
export function registerRun(program: Command): void {
  const command = program
    .command("run")
    .description(
      "run an agent on an OpenAI-compatible model with every tool call sandboxed; review before apply",
    )
    .requiredOption("-t, --task <text>", "what the agent should do")
    .option("--model <name>", "model name (default: $WARDEN_MODEL or gpt-4.1-mini)")
    .option(
      "--base-url <url>",
      "OpenAI-compatible API base URL, e.g. http://127.0.0.1:11434/v1 (default: OpenAI)",
    )
    .option("--api-key-env <name>", "environment variable holding the API key (default: OPENAI_API_KEY)")
    .option("--max-turns <n>", "stop after this many model calls", positiveInt, DEFAULT_MAX_TURNS)
    .option("--transcript <file>", "where to save the JSONL transcript (default: ~/.warden/runs/…)")
    .option("--export-patch <file>", "write the change as a unified patch (git format)")
    .option("--apply", "apply the change to the host workspace after confirmation")
    .option("-y, --yes", "with --apply: do not ask")
    .option(
      "--include-ignored",
      "keep changes to paths .gitignore ignores in the patch (default: listed apart)",
    )
    .option("--json", "print events as JSONL on stdout instead of the live view")
    .option("--log-file <file>", "write pino JSON logs here (nothing is logged otherwise)")
    .option("--non-interactive", "never prompt: policy 'ask' means deny");
  addSessionFlags(command).action((flags: RunFlags) => runRun(flags));
}
