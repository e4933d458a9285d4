/**
 * The interactive approval prompt on a terminal: shows the tool, its arguments and the rule that
 * asked, and reads one answer: [o]nce, [s]ession, [d]eny (Enter = deny). [s]ession allows the same
 * parts again for the rest of the session: the same argv, tool and path, or the identical command
 * for a part that depends on the rest of the script (see TrailEntry.approvalScope). Requests are
 * asked one at a time. An aborted request (timeout, cancelled call) answers deny.
 */
import { createInterface } from "node:readline/promises";
import type { ApprovalAnswer, ApprovalProvider, ApprovalRequest } from "../policy/index.js";
import { terminalSafeLine as shown } from "../util/index.js";

/** Where the prompt reads and writes. Defaults: process.stdin / process.stderr. */
export interface TerminalApprovalOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/**
 * Words the request for a person (also used by MCP elicitation). A network request names the
 * session, host, port and rule: `Network connection needs approval: session s1 connects to
 * pypi.org:443` / `  asked by rule 'ask pypi.org:443'`. Every value is shown with its control and
 * bidi characters escaped (terminalSafeLine): the part, reason and host come from the model, and a
 * raw ESC sequence in them could erase the real command and draw a harmless one (finding F5).
 */
export function describeRequest(
  req: Pick<ApprovalRequest, "tool" | "args" | "decision" | "network" | "sessionId">,
): string {
  if (req.network) {
    const { host, port, rule } = req.network;
    const session = req.sessionId ? `session ${shown(req.sessionId)} ` : "";
    return `Network connection needs approval: ${session}connects to ${shown(host)}:${port}\n  asked by rule '${shown(rule)}'`;
  }
  const d = req.decision;
  // JSON escapes C0 only: DEL, C1 and bidi controls would still reach the terminal raw.
  const lines = [`Tool call needs approval: ${shown(req.tool)} ${shown(JSON.stringify(req.args) ?? "")}`];
  const rule = d.ruleId ? `rule '${shown(d.ruleId)}'${d.layer ? ` (${shown(d.layer)})` : ""}` : "no rule";
  const part = d.part ? ` for '${shown(d.part)}'` : "";
  lines.push(`  asked by ${rule}${part}${d.reason ? `: ${shown(d.reason)}` : ""}`);
  return lines.join("\n");
}

/** Parses an answer: o/once, s/session, anything else deny. */
export function parseAnswer(text: string): ApprovalAnswer {
  const a = text.trim().toLowerCase();
  if (a === "o" || a === "once" || a === "y" || a === "yes") return "allow-once";
  if (a === "s" || a === "session") return "allow-session";
  return "deny";
}

/**
 * The prompt line: it reads a whole line, so it says to press Enter, and that Enter alone denies.
 * `scope` is what an [s]ession answer allows again.
 */
function approvalPrompt(network: boolean): string {
  const scope = network ? "this host and port" : "this exact call";
  return `Allow? Type o (once), s (${scope}, for the rest of the session) or d (deny), then press Enter; Enter alone denies: `;
}

/** The line written after the answer, so a typo that denied is seen as a deny. */
function answerLine(text: string, answer: ApprovalAnswer): string {
  if (answer === "allow-once") return "-> allowed once\n";
  if (answer === "allow-session") return "-> allowed for the rest of the session\n";
  const a = text.trim();
  const ignored = a === "" || /^(d|deny|n|no)$/i.test(a) ? "" : ` ('${shown(a)}' is not o or s)`;
  return `-> denied${ignored}\n`;
}

/** Prompts on a TTY (see module doc). */
export class TerminalApproval implements ApprovalProvider {
  readonly interactive = true;
  private queue: Promise<unknown> = Promise.resolve();
  constructor(private readonly options: TerminalApprovalOptions = {}) {}

  request(req: ApprovalRequest): Promise<ApprovalAnswer> {
    const next = this.queue.then(() => this.ask(req));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ask(req: ApprovalRequest): Promise<ApprovalAnswer> {
    if (req.signal.aborted) return "deny";
    const output = this.options.output ?? process.stderr;
    const rl = createInterface({ input: this.options.input ?? process.stdin, output, terminal: false });
    try {
      output.write(`${describeRequest(req)}\n`);
      const text = await rl.question(approvalPrompt(req.network !== undefined), { signal: req.signal });
      const answer = parseAnswer(text);
      output.write(answerLine(text, answer));
      return answer;
    } catch {
      return "deny";
    } finally {
      rl.close();
    }
  }
}
