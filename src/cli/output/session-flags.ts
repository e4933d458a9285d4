/**
 * The session flags `warden exec` and `warden replay` share: workspace, mode, image, runtime, policy
 * files and tool selection (Pi's `--tools`, `--exclude-tools`, `--no-tools`, `--no-builtin-tools`).
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../../errors.js";
import type { WorkspaceMode } from "../../sandbox/types.js";
import type { SessionOptions, ToolSelection } from "../../session/types.js";
import { loadPolicyHooks } from "./policy-hooks.js";

/** The parsed flags, as commander hands them over. */
export interface SessionFlags {
  workspace?: string;
  mode?: WorkspaceMode;
  image?: string;
  runtime?: "runc" | "runsc";
  tenant?: string;
  policy?: string[];
  /** A comma list; `false` when `--no-tools` was given. */
  tools?: string | false;
  excludeTools?: string;
  /** `false` when `--no-builtin-tools` was given. */
  builtinTools?: boolean;
}

/** Adds the shared session flags to `command`. */
export function addSessionFlags(command: Command): Command {
  return (
    command
      .option("-w, --workspace <dir>", "host directory exposed at /workspace")
      .addOption(
        new Option("-m, --mode <mode>", "how the workspace is exposed: copy (default), ro, rw").choices([
          "copy",
          "ro",
          "rw",
        ]),
      )
      .option("--image <image>", "sandbox image (default: warden-sandbox:latest)")
      .addOption(new Option("--runtime <runtime>", "OCI runtime").choices(["runc", "runsc"]))
      .option("--tenant <name>", "tenant label of the session's container (default: local)")
      // Repeatable, one file each (not variadic, which would swallow the tool and its arguments);
      // the first file has the highest authority (operator > tenant > project > session).
      .option(
        "--policy <file>",
        "policy file (allow/ask/deny rules), applied as a beforeToolCall hook; repeat for layers",
        (file: string, previous: string[] = []) => [...previous, file],
      )
      .option("--tools <names>", "strict allowlist of tools, comma-separated (e.g. read,ls)")
      .option("--exclude-tools <names>", "tools to disable after the allowlist, comma-separated")
      .option("--no-tools", "enable no tools at all")
      .option("--no-builtin-tools", "disable the built-in tools")
  );
}

function names(list: string): string[] {
  return list
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
}

/** The ToolSelection the flags describe. */
export function toolSelectionOf(flags: SessionFlags): ToolSelection {
  const selection: ToolSelection = {};
  if (flags.tools === false) selection.noTools = true;
  else if (typeof flags.tools === "string") selection.tools = names(flags.tools);
  if (flags.excludeTools) selection.excludeTools = names(flags.excludeTools);
  if (flags.builtinTools === false) selection.noBuiltinTools = true;
  return selection;
}

/**
 * SessionOptions for the flags, with a fresh session id: the workspace resolved to an absolute host path (a `--mode` without
 * `--workspace` is a usage error), the tool selection, and the policy hook when `--policy` is given.
 */
export async function sessionOptionsOf(flags: SessionFlags, signal?: AbortSignal): Promise<SessionOptions> {
  if (flags.mode && !flags.workspace) {
    throw new InvalidArgumentError("--mode needs --workspace <dir>: name the host directory to expose.");
  }
  const sessionId = randomUUID();
  const options: SessionOptions = { sessionId, toolSelection: toolSelectionOf(flags), signal };
  if (flags.workspace) options.workspace = { hostPath: resolve(flags.workspace), mode: flags.mode ?? "copy" };
  if (flags.image) options.image = flags.image;
  if (flags.runtime) options.runtime = flags.runtime;
  if (flags.tenant) options.tenant = flags.tenant;
  if (flags.policy && flags.policy.length > 0)
    options.beforeToolCall = await loadPolicyHooks(flags.policy, sessionId);
  return options;
}
