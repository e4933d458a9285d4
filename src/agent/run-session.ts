/**
 * One whole `warden run` below the CLI: snapshot the host workspace (copy mode), open a session, run
 * the agent loop with a transcript, collect the change for review, and always close the session
 * (Ctrl-C and provider errors included), so no container is left behind.
 */
import type { FileChange } from "../review/index.js";
import {
  collectChanges,
  computeDiffstat,
  type Diffstat,
  gitIgnoreMatcher,
  type HostBase,
  type HostSnapshot,
  patchChanges,
  snapshotHost,
  splitIgnored,
} from "../review/index.js";
import { excludeMatcher } from "../sandbox/index.js";
import type { Session, SessionOptions } from "../session/index.js";
import { runAgent } from "./loop.js";
import type { ChatModel } from "./model.js";
import type { TranscriptWriter } from "./transcript.js";
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
}

/** The change of a copy-mode run, read before the session closed. */
export interface RunReview {
  changes: FileChange[];
  stat: Diffstat;
  /** The unified patch (git format) against the session-start state, "" when nothing changed. */
  patch: string;
  /** Host hashes from before the copy. */
  snapshot: HostSnapshot;
  /** Changes left out of the patch and never applied: excluded from the copy, or git-ignored. */
  ignored: Array<{ path: string; reason: string }>;
  hostRoot: string;
}

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
export async function executeRun(options: ExecuteRunOptions): Promise<ExecuteRunOutcome> {
  const { sessionOptions, signal } = options;
  const workspace = sessionOptions.workspace;
  const copyMode = workspace !== undefined && (workspace.mode ?? "copy") === "copy";
  // Snapshot before the copy: a host edit racing the copy then shows up as a conflict, never as lost work.
  const base: HostBase = new Map();
  const excluded = copyMode ? excludeMatcher(workspace.exclude, workspace.excludeIf) : undefined;
  const snapshot = copyMode
    ? await snapshotHost(workspace.hostPath, { signal, base, ...(excluded ? { skip: excluded } : {}) })
    : undefined;
  const { transcript } = options;
  transcript.write({
    warden: "run_start",
    time: new Date().toISOString(),
    sessionId: sessionOptions.sessionId,
    model: options.model.model,
    task: options.task,
    ...(workspace ? { workspace: workspace.hostPath } : {}),
  });
  let result: AgentResult = { stopReason: "error", turns: 0, finalText: "" };
  let review: RunReview | undefined;
  let session: Session | undefined;
  try {
    session = await options.createSession(sessionOptions);
    result = await runAgent({
      session,
      model: options.model,
      task: options.task,
      maxTurns: options.maxTurns,
      systemPrompt: options.systemPrompt,
      signal,
      transcript,
      onEvent: options.onEvent,
    });
    if (copyMode && snapshot) {
      // After Ctrl-C the work so far is still collected (with its own time bound), so it is not lost.
      const collectSignal = signal?.aborted ? AbortSignal.timeout(COLLECT_AFTER_ABORT_MS) : signal;
      const gitIgnored = gitIgnoreMatcher(base);
      const { kept: changes, ignored } = splitIgnored(
        await collectChanges(session.sandbox, workspace.hostPath, {
          signal: collectSignal,
          base: { snapshot, bytes: base },
          oversize: "mark",
        }),
        (path) =>
          excluded?.(path) ? "excluded from the copy" : options.includeIgnored ? undefined : gitIgnored(path),
      );
      const patches = await patchChanges(changes, { signal: collectSignal });
      review = {
        changes,
        stat: computeDiffstat(patches),
        patch: patches.map((p) => p.text).join(""),
        snapshot,
        ignored,
        hostRoot: workspace.hostPath,
      };
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
