/**
 * Text from a sandbox or a model on its way to a person's terminal. Tool output is untrusted: a file
 * can hold escape sequences that clear the screen, retitle the window or write the clipboard (OSC 52),
 * so control characters are shown as visible `\xNN` escapes instead of being sent raw.
 * `terminalSafeLine` is the stricter form for one line a person decides on (an approval prompt, a
 * policy explanation): it also escapes tab, newline and the bidi controls, so model text can neither
 * start a fake line nor reorder what is shown.
 */

// C0 controls except tab and newline, a carriage return not ending a CRLF, DEL, and C1 controls.
const UNSAFE = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f]/g;

/** `text` with every terminal control character replaced by `\xNN`; tabs, newlines and CRLF kept. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/**
 * Every C0 control, DEL, C1 controls, and the bidi marks, embeddings, overrides and isolates
 * (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) that "Trojan Source" (CVE-2021-42574)
 * uses to show text in another order than it is read; and the line and paragraph separators
 * U+2028-U+2029, which break lines where an MCP client renders the text.
 */
const UNSAFE_IN_LINE =
  /[\x00-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` as one visible line: every character of UNSAFE_IN_LINE replaced by `\xNN` (up to U+00FF)
 * or `\uNNNN`. For model-controlled text shown to a person deciding on it (approval prompts,
 * `warden policy explain`): a newline could start a fake prompt line, ESC sequences move the cursor
 * and erase what is above, bidi overrides reorder the command on screen.
 */
export function terminalSafeLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
