/**
 * Repairs known legacy shapes of edit arguments before validation (Pi's prepareArguments,
 * earendil-works/pi#2949): top-level `oldText`/`newText` become one entry of `edits`, and an `edits`
 * sent as a JSON string is parsed. Anything else is returned unchanged for the validator to report.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Returns a repaired copy of `raw` (never mutates it):
 * - `edits` as a JSON string holding an array (or one edit object) is parsed;
 * - top-level `oldText` and `newText` strings are moved into `edits` (appended when `edits` exists).
 */
export function prepareEditArguments(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const args: Record<string, unknown> = { ...raw };
  if (typeof args.edits === "string") {
    try {
      const parsed: unknown = JSON.parse(args.edits);
      if (Array.isArray(parsed)) args.edits = parsed;
      else if (isRecord(parsed)) args.edits = [parsed];
    } catch {
      // Not JSON: leave it for validation to report.
    }
  }
  if (typeof args.oldText === "string" && typeof args.newText === "string") {
    const legacy = { oldText: args.oldText, newText: args.newText };
    args.edits = Array.isArray(args.edits)
      ? [...args.edits, legacy]
      : args.edits === undefined
        ? [legacy]
        : args.edits;
    if (Array.isArray(args.edits)) {
      delete args.oldText;
      delete args.newText;
    }
  }
  return args;
}
