/**
 * A one-line status with a spinner for TTYs (no dependency): redraws `frame label` in place every
 * 80 ms. `clear()` erases the line so other output can be printed; the next tick draws it again.
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The in-place status line. Only for TTY streams; callers keep it off otherwise. */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = "";
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WritableStream & { columns?: number },
    private readonly intervalMs = 80,
  ) {}

  /** Shows (or updates) the status; starts the animation if stopped. */
  set(label: string): void {
    this.label = label;
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), this.intervalMs);
      this.timer.unref();
    }
    this.draw();
  }

  /** Erases the status line (if drawn); it comes back on the next tick while running. */
  clear(): void {
    if (this.drawn) this.out.write("\r\x1b[2K");
    this.drawn = false;
  }

  /** Stops and erases. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  private draw(): void {
    const width = Math.max(20, (this.out.columns ?? 80) - 2);
    const text = `${FRAMES[this.frame++ % FRAMES.length]} ${this.label}`;
    this.out.write(`\r\x1b[2K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.drawn = true;
  }
}
