/**
 * Text from a sandbox or a model on its way to a person's terminal. Tool output is untrusted: a file
 * can hold escape sequences that clear the screen, retitle the window or write the clipboard (OSC 52),
 * so control characters are shown as visible `\xNN` escapes instead of being sent raw.
 */

// C0 controls except tab and newline, a carriage return not ending a CRLF, DEL, and C1 controls.
const UNSAFE = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f]/g;

/** `text` with every terminal control character replaced by `\xNN`; tabs, newlines and CRLF kept. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
