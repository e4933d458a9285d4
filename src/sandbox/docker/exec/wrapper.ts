/**
 * The POSIX-sh wrapper every command runs under, and the group-kill script.
 *
 * docker exec makes the wrapper a session leader; `setsid "$@" &` in the backgrounded child does
 * not fork (that child is not a group leader), so `$!` is the pgid of a new process group holding
 * the command and all its descendants. The pgid goes to a file under /run/warden so a second exec
 * can signal the group. After the main process exits, leftover group members (background children
 * that keep the output pipes open) get TERM, then KILL after ~1 s, so the exec stream ends and
 * the call returns (public faults 19 and 20). The exit status is the command's own: `wait`
 * yields 128+N for a death by signal N (fault 22). Written for dash: `kill -s SIG -- -PGID`.
 */
import { WARDEN_RUN_DIR } from "../hardening.js";

const WRAPPER = [
  'pf=$1; shift; setsid "$@" & m=$!; echo $m > "$pf"; wait $m; rc=$?',
  "if kill -s 0 -- -$m 2>/dev/null; then sleep 0.1; kill -s TERM -- -$m 2>/dev/null; i=0",
  "  while kill -s 0 -- -$m 2>/dev/null && [ $i -lt 10 ]; do sleep 0.1; i=$((i+1)); done",
  "  kill -s KILL -- -$m 2>/dev/null; fi",
  'rm -f "$pf"; exit $rc',
].join("\n");

/**
 * TERM the group, wait up to `$2` tenths of a second for it to go, then KILL it. Waits briefly for the
 * pgid file (the command may still be starting). Exits 0 when there is nothing to kill.
 */
const KILLER = [
  'pf=$1; n=$2; i=0; while [ ! -s "$pf" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i+1)); done',
  'p=$(cat "$pf" 2>/dev/null) || exit 0; [ -n "$p" ] || exit 0',
  "kill -s TERM -- -$p 2>/dev/null || exit 0",
  "i=0",
  "while kill -s 0 -- -$p 2>/dev/null && [ $i -lt $n ]; do sleep 0.1; i=$((i+1)); done",
  "kill -s KILL -- -$p 2>/dev/null; exit 0",
].join("\n");

/** Path of the pgid file of one exec. `execId` must be [A-Za-z0-9-]. */
function pgidFile(execId: string): string {
  return `${WARDEN_RUN_DIR}/${execId}.pgid`;
}

/** The full Cmd for docker exec: the wrapper around `argv`. */
export function wrapCommand(execId: string, argv: readonly string[]): string[] {
  return ["sh", "-c", WRAPPER, "warden", pgidFile(execId), ...argv];
}

/** The Cmd that TERMs, then (after `graceSeconds`) KILLs the group of exec `execId`. */
export function killGroupCommand(execId: string, graceSeconds: number): string[] {
  return [
    "sh",
    "-c",
    KILLER,
    "warden-kill",
    pgidFile(execId),
    String(Math.max(0, Math.round(graceSeconds * 10))),
  ];
}
