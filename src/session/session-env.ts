/**
 * A session's own environment variables: non-secret values (they are stored in plain text, e.g. in
 * `warden serve`'s session records) that every command of the session sees, on top of the sandbox's
 * PATH, HOME and LANG. Never taken from the host's environment: only what the caller names.
 */
import { InvalidArgumentError } from "../errors.js";
import { DANGEROUS_VARIABLES } from "../policy/index.js";
import type { ExecCommand, ExecOptions, Sandbox } from "../sandbox/index.js";

/** Most variables one session may set. */
const MAX_SESSION_ENV_VARS = 64;
/** Longest value, bytes (UTF-8). */
export const MAX_SESSION_ENV_VALUE_BYTES = 4096;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names a session may not set: the sandbox's own (PATH, HOME, LANG, which the tools rely on), the
 * locale override, and those that change what every program or shell loads or runs.
 */
const RESERVED_ENV_NAMES: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "BASH_ENV",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "IFS",
  "PS4",
]);

/**
 * Checks `env` (InvalidArgumentError naming the variable and the rule): at most
 * MAX_SESSION_ENV_VARS names, each `[A-Za-z_][A-Za-z0-9_]*`, not reserved nor `LD_*`, nor one the
 * policy's command model treats as changing what commands run (DANGEROUS_VARIABLES: GIT_*,
 * CDPATH, PAGER, RIPGREP_CONFIG_PATH, …), values strings without NUL of at most
 * MAX_SESSION_ENV_VALUE_BYTES. The policy judges a command by its text alone: a variable set for
 * the whole session would change what an allowed command does unseen (`GIT_CONFIG_COUNT=1 …
 * core.fsmonitor=<cmd>` made `git status`, allowed as read-only, run <cmd>).
 */
export function validateSessionEnv(env: Record<string, string>): void {
  const names = Object.keys(env);
  if (names.length > MAX_SESSION_ENV_VARS) {
    throw new InvalidArgumentError(
      `env has ${names.length} variables; at most ${MAX_SESSION_ENV_VARS} are allowed.`,
    );
  }
  for (const name of names) {
    const value = env[name];
    if (!NAME.test(name)) {
      throw new InvalidArgumentError(`env.${name}: a variable name is [A-Za-z_][A-Za-z0-9_]*.`);
    }
    if (RESERVED_ENV_NAMES.has(name) || name.startsWith("LD_")) {
      throw new InvalidArgumentError(
        `env.${name} is reserved (${[...RESERVED_ENV_NAMES].join(", ")} and LD_*): the sandbox sets or guards it.`,
      );
    }
    if (DANGEROUS_VARIABLES.test(name)) {
      throw new InvalidArgumentError(
        `env.${name} changes which program a command runs or what it loads (as GIT_*, CDPATH, PAGER and RIPGREP_CONFIG_PATH do), and the policy judges commands without the session's variables: a session may not set it. Set it in the command itself, where the policy sees it.`,
      );
    }
    if (typeof value !== "string" || value.includes("\0")) {
      throw new InvalidArgumentError(`env.${name} must be a string without NUL bytes.`);
    }
    if (Buffer.byteLength(value, "utf8") > MAX_SESSION_ENV_VALUE_BYTES) {
      throw new InvalidArgumentError(
        `env.${name} is ${Buffer.byteLength(value, "utf8")} bytes; at most ${MAX_SESSION_ENV_VALUE_BYTES} are allowed.`,
      );
    }
  }
}

/** `sandbox` whose `exec` adds `env` under each command's own variables; every other member is the sandbox's. */
export function withSessionEnv(sandbox: Sandbox, env: Record<string, string>): Sandbox {
  const exec = (command: ExecCommand, options: ExecOptions = {}) =>
    sandbox.exec(command, { ...options, env: { ...env, ...options.env } });
  return new Proxy(sandbox, {
    get(target, property) {
      if (property === "exec") return exec;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
