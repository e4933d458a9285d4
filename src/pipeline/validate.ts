/**
 * Argument validation with the typebox package, worded as Pi words it (pi-mono `validateToolArguments`,
 * see shared/reference/pi-tool-semantics.md): a header naming the tool, one `  - path: message` line per
 * error (util/schema-errors.ts piSchemaErrorLines), a blank line, "Received arguments:" and the
 * arguments as 2-space-indented JSON, bounded in size and depth (formatValidationError).
 */
import type { TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { Value } from "typebox/value";
import type { AnyTool } from "../tools/index.js";
import { boundedJson, cloneSharingStrings, jsonParseReason, piSchemaErrorLines } from "../util/index.js";

/** Outcome of validation: the coerced arguments, or Pi's error text. */
export type ValidationOutcome = { ok: true; args: unknown } | { ok: false; message: string };

const validators = new WeakMap<TSchema, Validator>();

/** The compiled validator of `schema`, compiled once and cached per schema object (as Pi does). */
export function compiledValidator(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

/** Characters of the received arguments an error echoes at most (Pi echoes them all). */
export const MAX_ECHO_CHARS = 2_048;
/** Levels of nesting an error echoes (tool arguments nest 3: edit's edits[n].oldText); deeper is `[…]`. */
export const MAX_ECHO_DEPTH = 8;
/** Error lines an error lists at most, each cut at MAX_ERROR_LINE_CHARS characters. */
export const MAX_ERROR_LINES = 20;
export const MAX_ERROR_LINE_CHARS = 256;

/**
 * Pi's validation error text for `toolName` with the given error lines and the arguments as received,
 * bounded (issue 37, item 2: Pi's unbounded echo of a 600 KB call was 37 MB): at most MAX_ERROR_LINES
 * lines of MAX_ERROR_LINE_CHARS, and the arguments as 2-space JSON of at most MAX_ECHO_CHARS
 * characters and MAX_ECHO_DEPTH levels (util/bounded-json.ts), each cut named in a last line. Within
 * the bounds the text is Pi's exactly. At most about 8 KiB plus the tool's name.
 */
export function formatValidationError(toolName: string, lines: string[], received: unknown): string {
  const shown = lines
    .slice(0, MAX_ERROR_LINES)
    .map((l) => (l.length > MAX_ERROR_LINE_CHARS ? `${l.slice(0, MAX_ERROR_LINE_CHARS - 1)}…` : l));
  if (lines.length > MAX_ERROR_LINES)
    shown.push(`  - (${lines.length - MAX_ERROR_LINES} more errors: at most ${MAX_ERROR_LINES} are listed)`);
  const echo = boundedJson(received, { maxChars: MAX_ECHO_CHARS, maxDepth: MAX_ECHO_DEPTH });
  const notice = echo.cut
    ? `\n[Received arguments cut: at most ${MAX_ECHO_CHARS} characters and ${MAX_ECHO_DEPTH} levels of nesting are echoed]`
    : "";
  return `Validation failed for tool "${toolName}":\n${shown.join("\n")}\n\nReceived arguments:\n${echo.text}${notice}`;
}

/**
 * Validates `args` against `tool.parameters`. Coerces with `Value.Convert` on a clone (the caller's
 * object is never changed), then checks with the cached compiled validator. Arguments that arrived as
 * a string that is not a JSON object are an error too. Never throws.
 */
export function validateToolArguments(tool: AnyTool, args: unknown): ValidationOutcome {
  let candidate = args;
  if (typeof args === "string") {
    try {
      candidate = JSON.parse(args);
    } catch (err) {
      const reason = jsonParseReason(err);
      return {
        ok: false,
        message: formatValidationError(
          tool.name,
          [`  - root: arguments are not valid JSON (${reason})`],
          args,
        ),
      };
    }
  }
  let converted: unknown;
  try {
    converted = Value.Convert(tool.parameters, cloneSharingStrings(candidate));
  } catch {
    converted = candidate;
  }
  const validator = compiledValidator(tool.parameters);
  if (validator.Check(converted)) return { ok: true, args: converted };
  const lines = piSchemaErrorLines(validator.Errors(converted));
  return { ok: false, message: formatValidationError(tool.name, lines, args) };
}
