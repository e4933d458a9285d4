/**
 * Ctrl-C handling for commands that own a session: the first SIGINT, SIGTERM or SIGHUP (the terminal
 * closed) aborts the work through an AbortSignal (so the session is still closed and no container
 * or spill directory is left behind); a second one exits at once.
 */

/**
 * The signals every command that owns a session handles by closing it. Node's default for each is
 * to exit at once, which would leave the container and the spill directory behind.
 */
export const SESSION_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** What `withInterrupt` ends with: the work's value, or no value when an interrupt made it fail. */
export type InterruptibleOutcome<T> =
  | { value: T; interrupted: boolean }
  | { value: undefined; interrupted: true };

/**
 * Runs `work` with a signal that fires on SESSION_SIGNALS; reports whether it was interrupted.
 * A rejection after an interrupt (e.g. sandbox creation cancelled) is swallowed: the outcome has no
 * value; any other rejection propagates.
 */
export async function withInterrupt<T>(
  work: (signal: AbortSignal) => Promise<T>,
): Promise<InterruptibleOutcome<T>> {
  const controller = new AbortController();
  let interrupted = false;
  let stdoutClosed = false;
  const onSignal = (name: NodeJS.Signals): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    // After SIGHUP the terminal may be gone: a failed write must not end the process before cleanup.
    process.stderr.write(`\nwarden: ${name} received, stopping and removing the sandbox (again to force)…\n`);
    controller.abort();
  };
  // A closed stdout (`warden replay … | head`) stops the work the same way instead of crashing the
  // process with EPIPE before the sandbox is removed.
  const onStdoutError = (err: NodeJS.ErrnoException): void => {
    if (err.code !== "EPIPE" || stdoutClosed) return;
    stdoutClosed = true;
    interrupted = true;
    controller.abort();
  };
  const onStderrError = (): void => undefined;
  for (const s of SESSION_SIGNALS) process.on(s, onSignal);
  process.stdout.on("error", onStdoutError);
  process.stderr.on("error", onStderrError);
  try {
    const value = await work(controller.signal);
    return { value, interrupted };
  } catch (err) {
    if (!interrupted) throw err;
    return { value: undefined, interrupted: true };
  } finally {
    for (const s of SESSION_SIGNALS) process.off(s, onSignal);
    process.stderr.off("error", onStderrError);
    // After EPIPE the listener stays: later writes to the closed stdout are dropped, not fatal.
    if (!stdoutClosed) process.stdout.off("error", onStdoutError);
  }
}
