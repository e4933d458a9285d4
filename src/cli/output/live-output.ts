/**
 * `warden exec` on a terminal: a command's output is shown as it comes (from the pipeline's
 * throttled `tool_execution_update` events, each the output so far), then only what the final result
 * adds (the footer). When the kept tail rolls past what was shown (the output is being cut), nothing
 * more is streamed and the final result is printed whole after a marker line.
 */

/** Streams updates through `write`; `finish` returns what is still to print of the final text. */
export class LiveOutput {
  private shown = "";
  private rolled = false;

  constructor(private readonly write: (text: string) => void) {}

  /** One update: the output so far. Writes what is new when it extends what was shown. */
  update(text: string): void {
    if (this.rolled) return;
    if (!text.startsWith(this.shown)) {
      this.rolled = true;
      return;
    }
    const delta = text.slice(this.shown.length);
    if (delta !== "") this.write(delta);
    this.shown = text;
  }

  /** The part of `finalText` not yet shown (all of it, after a marker, when the output rolled). */
  finish(finalText: string): string {
    if (this.shown === "") return finalText;
    if (this.rolled || !finalText.startsWith(this.shown))
      return `${this.shown.endsWith("\n") ? "" : "\n"}--- output cut while it ran; the result: ---\n${finalText}`;
    return finalText.slice(this.shown.length);
  }
}
