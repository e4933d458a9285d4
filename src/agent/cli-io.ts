/**
 * Terminal plumbing for `warden run`: the view (live or JSONL), the approval provider bound to it,
 * the apply confirmation, the transcript location and the pino logger (only ever to --log-file).
 */
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import pino, { type Logger } from "pino";
import { TerminalApproval } from "../approval/index.js";
import type { ApprovalProvider } from "../policy/index.js";
import type { JsonView } from "./render/json-view.js";
import { TerminalView } from "./render/terminal-view.js";
import type { TranscriptWriter } from "./transcript.js";
import type { AgentEvent } from "./types.js";

/** Either view; both take every AgentEvent. */
export type RunView = TerminalView | JsonView;

/** The directory default transcripts go to: $WARDEN_HOME/runs, default ~/.warden/runs (never the workspace). */
function runsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.WARDEN_HOME ?? join(homedir(), ".warden"), "runs");
}

/** The transcript path: `--transcript` or `<runsDir>/<UTC time>-<session id prefix>.jsonl`; parents created. */
export function transcriptPathFor(flag: string | undefined, sessionId: string, now = new Date()): string {
  const path = flag
    ? resolve(flag)
    : join(runsDir(), `${now.toISOString().replace(/[:.]/g, "-")}-${sessionId.slice(0, 8)}.jsonl`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/**
 * Where a copy-mode `exec`, `replay` or `mcp` session saves its change: `<runsDir>/<UTC time>-<session
 * id prefix>.patch` (`<transcript>.patch` is a run's); parents created.
 */
export function sessionPatchPathFor(sessionId: string, now = new Date()): string {
  const path = join(runsDir(), `${now.toISOString().replace(/[:.]/g, "-")}-${sessionId.slice(0, 8)}.patch`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/** A fresh session id. */
export const newSessionId = (): string => randomUUID();

/** A pino logger writing JSON lines to `file`, or undefined (nothing is logged to the terminal, ever). */
export function createRunLogger(file: string | undefined): Logger | undefined {
  if (!file) return undefined;
  return pino({ name: "warden-run" }, pino.destination({ dest: resolve(file), sync: true, mkdir: true }));
}

/** Logs the events worth keeping (not text deltas or tool updates). */
export function logEvent(logger: Logger | undefined, event: AgentEvent): void {
  if (!logger || event.type === "text_delta" || event.type === "tool_execution_update") return;
  if (event.type === "tool_execution_end") {
    logger.info({
      event: event.type,
      toolCallId: event.toolCallId,
      tool: event.toolName,
      isError: event.result.isError,
    });
  } else logger.info({ ...event, event: event.type, type: undefined });
}

/**
 * The approval provider for `ask` decisions: the terminal prompt, with the live view paused while it
 * asks; undefined without a TTY on stdin (the policy hook then treats ask as deny).
 */
export function approvalFor(
  view: RunView,
  stdinIsTTY = process.stdin.isTTY === true,
): ApprovalProvider | undefined {
  if (!stdinIsTTY) return undefined;
  const prompt = new TerminalApproval({ output: process.stderr });
  return {
    interactive: true,
    async request(req) {
      if (view instanceof TerminalView) view.pause();
      try {
        return await prompt.request(req);
      } finally {
        if (view instanceof TerminalView) view.resume();
      }
    },
  };
}

/**
 * A pino logger for the policy audit that records each decision in the transcript (a `decision`
 * line) and, with --log-file, in the run log too.
 */
export function decisionLogger(transcript: TranscriptWriter, runLogger: Logger | undefined): Logger {
  const destination = {
    write(line: string): void {
      const audit = JSON.parse(line) as Record<string, unknown>;
      transcript.write({ warden: "decision", time: new Date().toISOString(), audit });
      runLogger?.info({ ...audit, event: "policy_decision" });
    },
  };
  return pino({ base: null }, destination);
}

/** A y/N question on the terminal, or undefined when stdin is not a TTY. */
export function confirmer(
  stdinIsTTY = process.stdin.isTTY === true,
): ((q: string) => Promise<boolean>) | undefined {
  if (!stdinIsTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
    try {
      return /^y(es)?$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  };
}
