/** `--json`: every AgentEvent as one JSON line, for machines; nothing else goes to this stream. */
import type { AgentEvent } from "../types.js";

/** Writes events as JSONL to `out` (default stdout). */
export class JsonView {
  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  /** One event, one line. */
  handle(event: AgentEvent): void {
    this.out.write(`${JSON.stringify(event)}\n`);
  }

  /** Writes a non-agent record (the review summary) in the same stream. */
  record(record: Record<string, unknown>): void {
    this.out.write(`${JSON.stringify(record)}\n`);
  }
}
