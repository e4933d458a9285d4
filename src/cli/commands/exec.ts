/**
 * `warden exec <tool> '<json-arguments>'`: one tool call in a fresh session. Prints the result text
 * (with `--json`, the ToolResultMessage); on a terminal a command's output streams as it comes
 * (../output/live-output.ts). Exit 0 success, 1 isError result, 2 usage or engine errors,
 * 130 when interrupted. The session (container and spill files) is destroyed in every case, Ctrl-C,
 * SIGTERM and SIGHUP included. Without `--policy` the shipped default policy applies (said on stderr).
 * A copy-mode call that changed files saves the patch first and names it on stderr (session-patch.ts).
 */
import type { Command } from "commander";
import { renderResult } from "../../agent/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { createSession } from "../../session/index.js";
import { BUILTIN_TOOL_NAMES, type ToolResultMessage } from "../../tools/index.js";
import { jsonParseReason, terminalSafe } from "../../util/index.js";
import { addSessionFlags, type SessionFlags, sessionOptionsOf } from "../flags/session-flags.js";
import { LiveOutput } from "../output/live-output.js";
import { withInterrupt } from "../session/interrupt.js";
import { saveSessionChanges, startSessionPatch } from "../session/session-patch.js";

interface ExecFlags extends SessionFlags {
  json?: boolean;
}

/** Parses the arguments text; anything but a JSON object is a usage error naming the fix. */
export function parseExecArguments(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const reason = jsonParseReason(err);
    throw new InvalidArgumentError(
      `Tool arguments are not valid JSON (${reason}). Quote them for the shell: warden exec read '{"path":"README.md"}'.`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`Tool arguments must be a JSON object, got ${JSON.stringify(value)}.`);
  }
  return value as Record<string, unknown>;
}

/**
 * Throws InvalidArgumentError when `toolName` is not enabled: a built-in tool the flags disabled is
 * named as disabled, any other name as unknown; both list the enabled tools.
 */
export function checkToolEnabled(toolName: string, enabled: readonly string[]): void {
  if (enabled.includes(toolName)) return;
  const list = enabled.length > 0 ? enabled.join(", ") : "none";
  if (BUILTIN_TOOL_NAMES.includes(toolName))
    throw new InvalidArgumentError(
      `Tool ${toolName} is disabled in this session (--tools, --exclude-tools, --no-tools or --no-builtin-tools); enabled tools: ${list}.`,
    );
  throw new InvalidArgumentError(
    `Unknown tool '${toolName}'. Enabled tools: ${list}. A shell command goes through bash: warden exec bash '{"command":"${toolName} …"}'.`,
  );
}

/**
 * exec's session ends with the command, and its spill files with it: a "Full output: /spill/…" footer
 * would name a file that is gone. It is rewritten to say so.
 */
export function spillNote(text: string): string {
  return text.replace(
    /Full output: (\/spill\/[^\s\]]+)/g,
    "Full output not kept: $1 was in exec's session, removed when exec exited (run the command in `warden run`, or redirect its output to a file in a --workspace to keep it)",
  );
}

async function runExec(toolName: string, argumentsText: string, flags: ExecFlags): Promise<void> {
  const args = parseExecArguments(argumentsText);
  const live =
    process.stdout.isTTY === true && !flags.json
      ? new LiveOutput((text) => process.stdout.write(text))
      : undefined;
  const { value: result, interrupted } = await withInterrupt(async (signal): Promise<ToolResultMessage> => {
    const options = await sessionOptionsOf(flags, signal);
    const start = await startSessionPatch(options);
    const session = await createSession(options);
    try {
      checkToolEnabled(toolName, session.enabledTools);
      const [first] = await session.runToolCalls([{ id: "exec-1", name: toolName, arguments: args }], {
        signal,
        onEvent: (event) => {
          if (event.type !== "tool_execution_update") return;
          const block = event.partial.content[0];
          if (block?.type === "text") live?.update(terminalSafe(block.text));
        },
      });
      if (!first) throw new InvalidArgumentError("The pipeline returned no result.");
      return first;
    } finally {
      await saveSessionChanges(session, start, signal);
      await session.close();
    }
  });
  if (!result) {
    process.stderr.write("warden: interrupted before the call ran; the sandbox was removed.\n");
    process.exitCode = 130;
    return;
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const text = live ? live.finish(spillNote(renderResult(result))) : spillNote(renderResult(result));
    (result.isError ? process.stderr : process.stdout).write(text.endsWith("\n") ? text : `${text}\n`);
  }
  process.exitCode = interrupted ? 130 : result.isError ? 1 : 0;
}

/** Registers `warden exec`. */
export function registerExec(program: Command): void {
  const command = program
    .command("exec")
    .description("run one tool call in a fresh sandboxed session and print its result")
    .argument("<tool>", "tool name: read, bash, edit, write, grep, find or ls")
    .argument("[json-arguments]", "the call's arguments as a JSON object", "{}")
    .option("--json", "print the whole ToolResultMessage as JSON");
  addSessionFlags(command).action((tool: string, argumentsText: string, flags: ExecFlags) =>
    runExec(tool, argumentsText, flags),
  );
}
