/**
 * The memory backend's `exec`: no process ever runs (not on the host, not anywhere). A fixed set of
 * argv commands is answered in memory, with the ExecResult conventions of types.ts: `echo ARG…`
 * (its arguments joined by spaces, then a newline, on stdout), `true` (0), `false` (1) and
 * `sleep SECONDS` (waits; `timeoutMs` ends it with 124 and timedOut, the signal with 130 and
 * aborted, as GNU timeout and the engine's exec do). Anything else, a shell script included, is
 * refused with InvalidArgumentError naming the command and the ones there are.
 */
import { InvalidArgumentError } from "../../errors.js";
import type { ExecCommand, ExecOptions, ExecResult } from "../types.js";

/** The argv commands the memory backend answers (see the module comment). */
export const MEMORY_COMMANDS: readonly string[] = ["echo", "true", "false", "sleep"];

/** Runs `command` in memory (see the module comment). Rejects InvalidArgumentError for any other. */
export async function runMemoryCommand(command: ExecCommand, options: ExecOptions): Promise<ExecResult> {
  const started = performance.now();
  const done = (exitCode: number, end: { timedOut?: boolean; aborted?: boolean } = {}): ExecResult => ({
    exitCode,
    timedOut: end.timedOut ?? false,
    aborted: end.aborted ?? false,
    durationMs: performance.now() - started,
  });
  const argv = "argv" in command ? command.argv : undefined;
  const [name, ...args] = argv ?? [];
  if (!argv || name === undefined || !MEMORY_COMMANDS.includes(name)) {
    const what = argv
      ? JSON.stringify(argv)
      : `the shell script ${JSON.stringify((command as { shell: string }).shell)}`;
    throw new InvalidArgumentError({
      field: "command",
      problem: `the memory backend runs no process and answers only the argv commands ${MEMORY_COMMANDS.join(", ")}; got ${what}. Use the docker or kubernetes backend to run it.`,
    });
  }
  if (options.signal?.aborted) return done(130, { aborted: true });
  switch (name) {
    case "echo":
      await options.onStdout?.(Buffer.from(`${args.join(" ")}\n`, "utf8"));
      return done(0);
    case "true":
      return done(0);
    case "false":
      return done(1);
    default:
      return sleep(args, options, done);
  }
}

/** `sleep SECONDS`: resolves 0 after the wait, 124 at `timeoutMs`, 130 when `signal` aborts. */
function sleep(
  args: string[],
  options: ExecOptions,
  done: (exitCode: number, end?: { timedOut?: boolean; aborted?: boolean }) => ExecResult,
): Promise<ExecResult> {
  const seconds = Number(args[0]);
  if (args.length !== 1 || !Number.isFinite(seconds) || seconds < 0) {
    throw new InvalidArgumentError({
      field: "command",
      problem: `sleep takes one number of seconds, got ${JSON.stringify(args)}.`,
    });
  }
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    const finish = (result: ExecResult) => {
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const onAbort = () => finish(done(130, { aborted: true }));
    timers.push(setTimeout(() => finish(done(0)), seconds * 1000));
    if (options.timeoutMs !== undefined)
      timers.push(setTimeout(() => finish(done(124, { timedOut: true })), options.timeoutMs));
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}
