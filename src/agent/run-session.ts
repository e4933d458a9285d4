/**
 * One whole `warden run` below the CLI: snapshot the host workspace (copy mode), open a session, run
 * the agent loop with a transcript, collect the change for review, and always close the session
 * (Ctrl-C and provider errors included), so no container is left behind.
 */
import type { PolicyRecord } from "../policy/index.js";
import { finishReview, type SessionReview, startReview, type WorkspaceRecord } from "../review/index.js";
import type { Session, SessionOptions } from "../session/index.js";
import { runAgent } from "./loop.js";
import type { ChatModel } from "./model.js";
import type { TranscriptRecord, TranscriptWriter } from "./transcript.js";

type TranscriptWorkspaceId = NonNullable<Extract<TranscriptRecord, { warden: "run_start" }>["workspaceId"]>;

import { omitUndefined } from "../util/index.js";
import type { AgentEvent, AgentResult } from "./types.js";

/** How long collecting an interrupted run's changes may take, in ms. */
const COLLECT_AFTER_ABORT_MS = 60_000;

/** Options of executeRun. `sessionOptions.workspace` decides the mode; review happens in copy mode only. */
export interface ExecuteRunOptions {
  task: string;
  model: ChatModel;
  sessionOptions: SessionOptions & { sessionId: string };
  /** Opens the session (createSession; tests may pass another). */
  createSession: (options: SessionOptions) => Promise<Session>;
  /** Where the run is recorded (created by the caller, so policy decisions can go to it too). */
  transcript: TranscriptWriter;
  maxTurns?: number;
  systemPrompt?: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Keep changes to paths the workspace's .gitignore ignores in the patch (default: listed apart). */
  includeIgnored?: boolean;
  /** The policy the session runs under, recorded in the transcript's run_start (what replay uses). */
  policy?: PolicyRecord;
}

/** The change of a copy-mode run, read before the session closed (review/'s SessionReview). */
export type RunReview = SessionReview;

/** What executeRun returns. `review` is absent outside copy mode (after an abort it holds the changes so far). */
export interface ExecuteRunOutcome {
  result: AgentResult;
  sessionId: string;
  transcriptPath: string;
  review?: RunReview;
}

/**
 * Runs it (see module doc). Rejects only when the session cannot be opened or the review cannot be
 * read (engine errors); agent-side failures are in `result`.
 */
/** A workspace record without its path: what run_start's workspaceId holds. */
function identityOfRecord({ path: _path, ...identity }: WorkspaceRecord): TranscriptWorkspaceId {
  return identity;
}

export async function executeRun(options: ExecuteRunOptions): Promise<ExecuteRunOutcome> {
  const { sessionOptions, signal } = options;
  const workspace = sessionOptions.sandbox?.workspace;
  const start = await startReview(workspace, signal);
  const { transcript } = options;
  transcript.write({
    warden: "run_start",
    time: new Date().toISOString(),
    sessionId: sessionOptions.sessionId,
    model: options.model.model,
    task: options.task,
    ...(workspace ? { workspace: workspace.hostPath } : {}),
    ...(start ? { workspaceId: identityOfRecord(start.workspace) } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  let result: AgentResult = { stopReason: "error", turns: 0, finalText: "" };
  let review: RunReview | undefined;
  let session: Session | undefined;
  try {
    session = await options.createSession(sessionOptions);
    result = await runAgent(
      omitUndefined({
        session,
        model: options.model,
        task: options.task,
        maxTurns: options.maxTurns,
        systemPrompt: options.systemPrompt,
        signal,
        transcript,
        onEvent: options.onEvent,
      }),
    );
    if (start) {
      // After Ctrl-C the work so far is still collected (with its own time bound), so it is not lost.
      const collectSignal = signal?.aborted ? AbortSignal.timeout(COLLECT_AFTER_ABORT_MS) : signal;
      review = await finishReview(session.sandbox, start, {
        ...(collectSignal ? { signal: collectSignal } : {}),
        includeIgnored: options.includeIgnored === true,
      });
    }
  } catch (err) {
    // Session creation or review failed: recorded in run_end below, then rethrown.
    result = { ...result, stopReason: signal?.aborted ? "aborted" : "error", error: err };
    throw err;
  } finally {
    await session?.close();
    const error = result.error instanceof Error ? result.error.message : undefined;
    transcript.write({
      warden: "run_end",
      time: new Date().toISOString(),
      stopReason: result.stopReason,
      turns: result.turns,
      ...(error ? { error } : {}),
    });
  }
  return {
    result,
    sessionId: sessionOptions.sessionId,
    transcriptPath: transcript.path,
    ...(review ? { review } : {}),
  };
}
