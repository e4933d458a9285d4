/**
 * The process tool: the session's background processes (src/process) for models. warden's own, not
 * one of Pi's seven: a session has it only when its tool selection names it (OPT_IN_TOOL_NAMES).
 * One tool with an `action` (start, output, input, kill, list, wait), described as Pi describes its
 * tools. `start` runs a bash script (`bash -c`, as the bash tool does; a policy judges it as bash);
 * `output` pages through the merged output with bash's limits and says where to continue; `input`
 * writes text as given. The processes come from the ToolContext; without them every action fails
 * with a clear error result.
 */
import { type Static, Type } from "typebox";
import { InvalidArgumentError, NotFoundError, WardenError } from "../errors.js";
import {
  PROCESS_SIGNALS,
  type Processes,
  type ProcessInfo,
  type ProcessSignal,
  type TerminalSize,
} from "../process/index.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from "../truncate/index.js";
import { omitUndefined } from "../util/index.js";
import { checkRunnable, timeoutMs } from "./bash.js";
import { normalizeToolPath } from "./paths.js";
import { listText, type OutputSliceDetails, renderSlice, statusLine } from "./process-text.js";
import type { Tool, ToolContext } from "./types.js";

/** The actions of the process tool. */
const PROCESS_ACTIONS = ["start", "output", "input", "kill", "list", "wait"] as const;
type ProcessAction = (typeof PROCESS_ACTIONS)[number];

/** The terminal size of a process started with `pty: true`. */
const PROCESS_PTY_SIZE: TerminalSize = { cols: 80, rows: 24 };

const processSchema = Type.Object({
  action: Type.Enum([...PROCESS_ACTIONS], {
    type: "string",
    description: "What to do: start, output, input, kill, list or wait",
  }),
  command: Type.Optional(Type.String({ description: "start: bash command to run in the background" })),
  cwd: Type.Optional(
    Type.String({
      description: "start: working directory (optional, default the current working directory)",
    }),
  ),
  pty: Type.Optional(
    Type.Boolean({
      description: "start: run under an 80x24 pseudo-terminal, for programs that need one (REPLs, prompts)",
    }),
  ),
  id: Type.Optional(
    Type.String({ description: "output, input, kill, wait: the process id start returned (p1, p2, ...)" }),
  ),
  offset: Type.Optional(
    Type.Integer({
      description: "output: byte offset to read from (optional, default where the last output call stopped)",
      minimum: 0,
    }),
  ),
  text: Type.Optional(Type.String({ description: "input: text to write to its stdin, exactly as given" })),
  close: Type.Optional(Type.Boolean({ description: "input: close its stdin after the text (end of input)" })),
  signal: Type.Optional(
    Type.Enum([...PROCESS_SIGNALS], {
      type: "string",
      description: "kill: signal name without SIG (default TERM)",
    }),
  ),
  timeout: Type.Optional(
    Type.Number({
      description: "wait: timeout in seconds (optional, no default timeout)",
      exclusiveMinimum: 0,
    }),
  ),
});

/** Arguments of the process tool. */
type ProcessToolInput = Static<typeof processSchema>;

/** The fields each action takes besides `action`, and the ones it needs. */
const ACTION_FIELDS: Record<ProcessAction, { takes: readonly string[]; needs: readonly string[] }> = {
  start: { takes: ["command", "cwd", "pty"], needs: ["command"] },
  output: { takes: ["id", "offset"], needs: ["id"] },
  input: { takes: ["id", "text", "close"], needs: ["id"] },
  kill: { takes: ["id", "signal"], needs: ["id"] },
  list: { takes: [], needs: [] },
  wait: { takes: ["id", "timeout"], needs: ["id"] },
};

/** details of a process result: the action and what it saw. */
interface ProcessToolDetails {
  action: ProcessAction;
  /** The process acted on, as the call left it (start, wait). */
  process?: ProcessInfo;
  /** Every process of the session (list). */
  processes?: ProcessInfo[];
  /** The slice shown (output). */
  output?: OutputSliceDetails;
  /** Bytes written to stdin, and whether stdin was closed (input). */
  bytesWritten?: number;
  closed?: boolean;
  /** The signal sent (kill). */
  signal?: ProcessSignal;
}

/** Throws InvalidArgumentError naming the fields `args.action` does not take, or those it needs and lacks. */
function checkFields(args: ProcessToolInput): void {
  const { action } = args;
  const { takes, needs } = ACTION_FIELDS[action];
  const given = Object.entries(args)
    .filter(([k, v]) => k !== "action" && v !== undefined)
    .map(([k]) => k);
  const extra = given.filter((k) => !takes.includes(k));
  if (extra.length > 0) {
    const takesText = takes.length > 0 ? `takes only ${takes.join(", ")}` : "takes no other field";
    throw new InvalidArgumentError(
      `process ${action} ${takesText}; got ${extra.join(", ")}. Nothing was done.`,
    );
  }
  const missing = needs.filter((k) => !given.includes(k));
  if (missing.length > 0)
    throw new InvalidArgumentError(`process ${action} needs ${missing.join(" and ")}. Nothing was done.`);
}

/** The session's processes, or a clear error when it has none. */
function processesOf(ctx: ToolContext): Processes {
  if (ctx.processes) return ctx.processes;
  throw new WardenError(
    "CONFLICT",
    "This session has no background processes, so the process tool cannot run here. Run the command with bash instead.",
  );
}

/** Runs `act` on process `id`; an unknown id becomes NotFoundError telling the model how to find its processes. */
async function onProcess<T>(id: string, act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    throw new NotFoundError(
      `No process ${id} in this session. {"action": "list"} shows the session's processes.`,
    );
  }
}

/** ` {"action": "output", "id": "p1"}` reads N bytes not read yet (wait's note), or nothing. */
function unreadNote(info: ProcessInfo, readUpTo: number): string {
  const unread = info.outputBytes - Math.max(readUpTo, info.keptFrom);
  if (unread <= 0) return "";
  return ` ${unread} bytes of its output not read yet: {"action": "output", "id": "${info.id}"} reads them.`;
}

/** Creates the process tool (one per session: it remembers where each process's output was read up to). */
export function createProcessTool(): Tool<typeof processSchema, ProcessToolDetails> {
  const readUpTo = new Map<string, number>();
  return {
    name: "process",
    label: "process",
    description:
      "Run a command in the background and work with it while it runs (servers, watchers, REPLs, long builds). " +
      "Actions: start {command, cwd?, pty?} runs a bash command in the background and returns its id at once; " +
      `output {id, offset?} returns its next output (stdout and stderr merged), truncated to ${DEFAULT_MAX_LINES} ` +
      `lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first), and the offset to continue from; ` +
      "input {id, text, close?} writes text to its stdin exactly as given (end a line with \\n), close: true then " +
      "closes stdin; kill {id, signal?} sends a signal (default TERM); list shows the session's processes; " +
      "wait {id, timeout?} waits until it exits, or timeout seconds pass. Processes end with the session. " +
      "For a command that finishes on its own, use bash.",
    parameters: processSchema,
    async execute(_toolCallId, args, ctx) {
      checkFields(args);
      const processes = processesOf(ctx);
      const { signal } = ctx;
      const id = args.id ?? "";
      const result = (text: string, details: ProcessToolDetails) => ({
        content: [{ type: "text" as const, text }],
        details,
      });
      switch (args.action) {
        case "start": {
          const command = args.command ?? "";
          checkRunnable(command);
          const info = await processes.start(
            omitUndefined({
              command: { shell: command },
              cwd: args.cwd === undefined ? undefined : normalizeToolPath(args.cwd),
              pty: args.pty ? { ...PROCESS_PTY_SIZE } : undefined,
              signal,
            }),
          );
          readUpTo.set(info.id, 0);
          const text = `Started process ${info.id} in the background. {"action": "output", "id": "${info.id}"} reads its output.`;
          return result(text, { action: "start", process: info });
        }
        case "output": {
          const offset = args.offset ?? readUpTo.get(id) ?? 0;
          const slice = await onProcess(id, () =>
            processes.read(id, omitUndefined({ offset, maxBytes: DEFAULT_MAX_BYTES, signal })),
          );
          const { text, details } = renderSlice(slice);
          readUpTo.set(id, details.nextOffset);
          return result(text, { action: "output", output: details });
        }
        case "input": {
          const text = args.text ?? "";
          if (text === "" && !args.close)
            // text may be left out only to close stdin
            throw new InvalidArgumentError(
              "process input needs text to write, or close: true to close stdin. Nothing was done.",
            );
          const data = Buffer.from(text, "utf8");
          if (data.length > 0) await onProcess(id, () => processes.write(id, data));
          if (args.close) await onProcess(id, () => processes.closeInput(id));
          const wrote = `Wrote ${data.length} bytes to the stdin of process ${id}`;
          const said =
            data.length === 0
              ? `Closed the stdin of process ${id}.`
              : `${wrote}${args.close ? ", then closed it" : ""}.`;
          return result(said, { action: "input", bytesWritten: data.length, closed: args.close === true });
        }
        case "kill": {
          const sent = args.signal ?? "TERM";
          await onProcess(id, () => processes.kill(id, sent));
          return result(`Sent ${sent} to process ${id}.`, { action: "kill", signal: sent });
        }
        case "list": {
          const all = await processes.list(omitUndefined({ signal }));
          return result(listText(all), { action: "list", processes: all });
        }
        case "wait": {
          const limitMs = timeoutMs(args.timeout);
          const info = await onProcess(id, () =>
            processes.wait(id, omitUndefined({ timeoutMs: limitMs, signal })),
          );
          const state =
            info.state === "running" && args.timeout !== undefined
              ? `Process ${id} is still running after ${args.timeout} seconds.`
              : statusLine(info);
          return result(`${state}${unreadNote(info, readUpTo.get(id) ?? 0)}`, {
            action: "wait",
            process: info,
          });
        }
      }
    },
  };
}
