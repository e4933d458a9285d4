/**
 * Ctrl-C handling for commands that own a session: the first SIGINT/SIGTERM aborts the work through an
 * AbortSignal (so the session is still closed and no container is left behind); a second one exits at once.
 */

/** Runs `work` with a signal that fires on SIGINT or SIGTERM; reports whether it was interrupted. */
export async function withInterrupt<T>(
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; interrupted: boolean }> {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = (name: NodeJS.Signals): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nwarden: ${name} received, stopping and removing the sandbox (again to force)…\n`);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const value = await work(controller.signal);
    return { value, interrupted };
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
