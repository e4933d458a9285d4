/**
 * The reason `JSON.parse` gave for refusing a text, worded the same on every Node that warden supports.
 * Newer V8 (Node 22's later releases, 24, 26) appends " (line L column C)" to "… at position N"; Node
 * 22.12 and 20 do not. That suffix is dropped, so a message built from the reason (one the model reads,
 * a CLI usage error) does not change with the Node that runs warden, nor differ from Pi's on Node 20
 * (test/pi). The position, which says the same, stays.
 *
 * @param err what `JSON.parse` threw (a SyntaxError); anything else is turned into a string.
 * @returns e.g. "Expected property name or '}' in JSON at position 1".
 */
export function jsonParseReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/(at position \d+) \(line \d+ column \d+\)/, "$1");
}
