/** A session's environment variables: validation, and the sandbox view that adds them to every command. */
import { describe, expect, it } from "vitest";
import type { ExecOptions } from "../../../src/sandbox/types.js";
import {
  MAX_SESSION_ENV_VALUE_BYTES,
  validateSessionEnv,
  withSessionEnv,
} from "../../../src/session/index.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

describe("validateSessionEnv", () => {
  it("accepts ordinary names and values", () => {
    expect(() => validateSessionEnv({ GREETING: "hi", _x1: "", CI: "1", TZ: "UTC" })).not.toThrow();
  });

  it("refuses every name that changes what a command runs or loads: the policy judges commands without them", () => {
    // An attack's four: GIT_CONFIG_* made `git status` run core.fsmonitor, RIPGREP_CONFIG_PATH
    // gave `rg` --pre=sh, CDPATH took `cd refs` into .git, GIT_CONFIG_GLOBAL read a written file.
    for (const name of [
      "GIT_CONFIG_COUNT",
      "GIT_CONFIG_GLOBAL",
      "RIPGREP_CONFIG_PATH",
      "CDPATH",
      "PAGER",
      "NODE_OPTIONS",
      "GCONV_PATH",
      "JAVA_TOOL_OPTIONS",
      // Digits and npm's case-insensitive prefix (a review found these got through).
      "GIT_TRACE2",
      "GIT_CONFIG_KEY_0",
      "nPm_CoNfIg_script_shell",
      "OPENSSL_CONF",
      "POSIXLY_CORRECT",
      // Issue 37, item 5: the command model's tool variables (pytest adds options and plugins from them).
      "PYTEST_ADDOPTS",
      "PYTEST_PLUGINS",
      "MFLAGS",
    ])
      expect(() => validateSessionEnv({ [name]: "x" })).toThrow(
        `env.${name} changes which program a command runs or what it loads (as GIT_*, CDPATH, PAGER and RIPGREP_CONFIG_PATH do), and the policy judges commands without the session's variables: a session may not set it. Set it in the command itself, where the policy sees it.`,
      );
  });

  it("refuses bad names, reserved names, LD_*, NUL and long values, naming the variable", () => {
    expect(() => validateSessionEnv({ "1BAD": "x" })).toThrow(
      "env.1BAD: a variable name is [A-Za-z_][A-Za-z0-9_]*.",
    );
    expect(() => validateSessionEnv({ PATH: "/evil" })).toThrow(
      "env.PATH is reserved (PATH, HOME, LANG, LC_ALL, BASH_ENV, ENV, SHELLOPTS, BASHOPTS, IFS, PS4 and LD_*): the sandbox sets or guards it.",
    );
    expect(() => validateSessionEnv({ LD_PRELOAD: "/x.so" })).toThrow("env.LD_PRELOAD is reserved");
    expect(() => validateSessionEnv({ A: "a\0b" })).toThrow("env.A must be a string without NUL bytes.");
    expect(() => validateSessionEnv({ A: "x".repeat(MAX_SESSION_ENV_VALUE_BYTES + 1) })).toThrow(
      `env.A is ${MAX_SESSION_ENV_VALUE_BYTES + 1} bytes; at most ${MAX_SESSION_ENV_VALUE_BYTES} are allowed.`,
    );
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, "x"]));
    expect(() => validateSessionEnv(many)).toThrow("env has 65 variables; at most 64 are allowed.");
  });
});

describe("withSessionEnv", () => {
  it("adds the session's variables under each command's own; other members are the sandbox's", async () => {
    const seen: ExecOptions[] = [];
    const sandbox = new FakeSandbox({ info: { containerId: "c" }, links: { "/x": "/real/x" } });
    sandbox.execScript = async (_command, options) => {
      seen.push(options);
      return { exitCode: 0, timedOut: false, aborted: false, durationMs: 1 };
    };
    const view = withSessionEnv(sandbox, { A: "session", B: "session" });
    await view.exec({ shell: "true" }, { timeoutMs: 5, env: { B: "call" } });
    await view.exec({ shell: "true" });
    expect(seen).toEqual([
      { timeoutMs: 5, env: { A: "session", B: "call" } },
      { env: { A: "session", B: "session" } },
    ]);
    expect(await view.realpath("/x")).toBe("/real/x");
    expect(view.info.containerId).toBe("c");
  });
});
