/**
 * The live terminal view of `warden run`: model text streams as it arrives; each tool call shows a
 * spinner with a live tail of its output while it runs (TTY only), then one result line, with a
 * coloured diff for edits and the last lines of bash output. Without a TTY it prints the same
 * information as plain lines (no control sequences, no colour).
 */
import pc from "picocolors";
import { terminalSafe } from "../../util/index.js";
import type { AgentEvent } from "../types.js";
import { describeCall, lastLines, resultText } from "./describe-call.js";
import { resultDiff } from "./format-result.js";
import { Spinner } from "./spinner.js";

/** Where and how to draw. `tty` defaults to `out.isTTY`, `colour` to tty && picocolors' detection. */
export interface TerminalViewOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  tty?: boolean;
  colour?: boolean;
  /** Lines of tool output shown after each call. Default 5. */
  tailLines?: number;
}

interface Running {
  label: string;
  startedMs: number;
  tail: string;
}

/** Renders AgentEvents (see module doc). Call `stop()` at the end; `pause()`/`resume()` around prompts. */
export class TerminalView {
  private readonly out: TerminalViewOptions["out"];
  private readonly tty: boolean;
  private readonly c: ReturnType<typeof pc.createColors>;
  private readonly spinner: Spinner | undefined;
  private readonly running = new Map<string, Running>();
  private readonly tailLines: number;
  private atLineStart = true;
  private paused = false;
  private waitingForModel = false;

  constructor(options: TerminalViewOptions) {
    this.out = options.out;
    this.tty = options.tty ?? options.out.isTTY === true;
    this.c = pc.createColors(options.colour ?? (this.tty && pc.isColorSupported));
    this.spinner = this.tty ? new Spinner(options.out) : undefined;
    this.tailLines = options.tailLines ?? 5;
  }

  /** Handles one event. */
  handle(event: AgentEvent): void {
    switch (event.type) {
      case "turn_start":
        this.waitingForModel = true;
        this.status();
        return;
      case "text_delta":
        this.waitingForModel = false;
        this.spinner?.stop();
        this.out.write(terminalSafe(event.text));
        this.atLineStart = event.text.endsWith("\n");
        return;
      case "assistant_message":
        this.waitingForModel = false;
        this.spinner?.stop();
        this.newline();
        return;
      case "model_retry": {
        const why = event.status === undefined ? "network error" : `HTTP ${event.status}`;
        this.line(
          this.c.yellow(`model: ${why} (${event.reason}); retrying in ${(event.delayMs / 1000).toFixed(1)}s`),
        );
        return;
      }
      case "tool_calls_not_run":
        this.line(
          this.c.yellow(
            `response cut off by the output limit: ${event.results.length} call(s) not run, model asked to re-issue`,
          ),
        );
        return;
      case "tool_execution_start":
        this.running.set(event.toolCallId, {
          label: describeCall(event.toolName, event.args),
          startedMs: Date.now(),
          tail: "",
        });
        if (!this.tty) this.line(this.c.dim(`▸ ${describeCall(event.toolName, event.args)}`));
        this.status();
        return;
      case "tool_execution_update": {
        const run = this.running.get(event.toolCallId);
        if (run) run.tail = lastLines(resultText(event.partial), 1)[0] ?? run.tail;
        this.status();
        return;
      }
      case "tool_execution_end":
        this.toolEnd(event.toolCallId, event.toolName, event.result, event.decision?.approvalMs);
        return;
      case "agent_end":
        this.spinner?.stop();
        this.newline();
        if (event.stopReason === "max_turns")
          this.line(this.c.yellow(`Stopped after ${event.turns} turns (--max-turns).`));
        if (event.stopReason === "aborted") this.line(this.c.yellow("Interrupted."));
        return;
    }
  }

  /** Stops the spinner and keeps the view quiet (for an approval prompt). */
  pause(): void {
    this.paused = true;
    this.spinner?.stop();
    this.newline();
  }

  /** Resumes after pause(). */
  resume(): void {
    this.paused = false;
    this.status();
  }

  /** Stops the spinner for good. */
  stop(): void {
    this.spinner?.stop();
  }

  private toolEnd(
    id: string,
    toolName: string,
    result: { isError: boolean; content: unknown[]; details?: unknown },
    approvalMs = 0,
  ): void {
    const run = this.running.get(id);
    this.running.delete(id);
    // The time a person took to answer an ask is not the tool's: shown apart.
    const seconds = run ? ((Date.now() - run.startedMs - approvalMs) / 1000).toFixed(1) : "?";
    const waited = approvalMs > 0 ? `, ${(approvalMs / 1000).toFixed(1)}s waiting for approval` : "";
    const mark = result.isError ? this.c.red("✗") : this.c.green("✓");
    this.line(`${mark} ${run?.label ?? toolName} ${this.c.dim(`(${seconds}s${waited})`)}`);
    const text = resultText(result as Parameters<typeof resultText>[0]);
    const diff = resultDiff(result);
    if (diff && !result.isError) {
      for (const l of diff.split("\n")) this.line(`    ${this.colourDiffLine(l)}`);
    } else if (toolName === "bash" || result.isError) {
      for (const l of lastLines(text, this.tailLines)) this.line(this.c.dim(`    ${l}`));
    }
    this.status();
  }

  private colourDiffLine(line: string): string {
    if (line.startsWith("+")) return this.c.green(line);
    if (line.startsWith("-")) return this.c.red(line);
    return this.c.dim(line);
  }

  /** Redraws the spinner line for what is running (TTY only). */
  private status(): void {
    if (!this.spinner || this.paused) return;
    if (this.running.size === 0) {
      if (this.waitingForModel) {
        this.newline();
        this.spinner.set("waiting for the model…");
      } else this.spinner.stop();
      return;
    }
    this.newline();
    const runs = [...this.running.values()];
    const first = runs[0];
    const more = runs.length > 1 ? ` (+${runs.length - 1} more)` : "";
    const tail = first?.tail ? this.c.dim(` │ ${first.tail}`) : "";
    this.spinner.set(`${first?.label ?? ""}${more}${tail}`);
  }

  private newline(): void {
    if (!this.atLineStart) {
      this.spinner?.clear();
      this.out.write("\n");
      this.atLineStart = true;
    }
  }

  private line(text: string): void {
    this.spinner?.clear();
    this.newline();
    this.out.write(`${text}\n`);
    this.atLineStart = true;
  }
}
