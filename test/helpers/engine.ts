/**
 * Engine-test gate. Tests whose behaviour lives in the container run only against a real engine:
 * with none reachable they are skipped with a visible message locally, and FAIL under CI=true.
 */
import Docker from "dockerode";
import { describe } from "vitest";

async function probe(): Promise<string | null> {
  try {
    await new Docker().ping();
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const unreachable = await probe();
const inCI = process.env.CI === "true" || process.env.CI === "1";

if (unreachable && !inCI) {
  console.warn(
    `[warden] Docker engine unreachable (${unreachable}): engine tests SKIPPED. Run 'npm run engine'.`,
  );
}

/** `describe` for engine tests: runs with an engine, skips visibly without one, fails in CI without one. */
export const describeEngine: typeof describe =
  unreachable && !inCI ? (describe.skip as typeof describe) : describe;

/** Throws in CI when the engine is missing, so the suite cannot pass silently. */
export function assertEngine(): void {
  if (unreachable) throw new Error(`Docker engine unreachable under CI: ${unreachable}`);
}
