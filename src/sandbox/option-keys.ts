/**
 * The SandboxOptions part of a larger options bag (SessionOptions is SandboxOptions plus the
 * session's own fields): the sandbox's fields are listed here once, so a session field can never
 * reach createSandbox and nobody strips session fields by hand.
 */
import type { SandboxOptions } from "./types.js";

/** Every key of SandboxOptions: `satisfies` turns a new SandboxOptions field missing here into a compile error. */
const SANDBOX_OPTION_KEYS = Object.keys({
  image: true,
  workspace: true,
  mounts: true,
  limits: true,
  runtime: true,
  sessionId: true,
  tenant: true,
  ttlMs: true,
  controllerId: true,
  signal: true,
  execPath: true,
  network: true,
} satisfies Record<keyof SandboxOptions, true>) as (keyof SandboxOptions)[];

/**
 * The SandboxOptions fields of `options` that are set (not undefined), and nothing else: a wider
 * bag's own fields (a session's hooks, spill caps, env…) are left out. Values are not copied deeply.
 */
export function pickSandboxOptions(options: SandboxOptions): SandboxOptions {
  const picked: Record<string, unknown> = {};
  for (const key of SANDBOX_OPTION_KEYS) {
    if (options[key] !== undefined) picked[key] = options[key];
  }
  return picked as SandboxOptions;
}
