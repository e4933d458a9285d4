/**
 * Argument validation with the typebox package, worded as Pi words it (pi-mono `validateToolArguments`,
 * see shared/reference/pi-tool-semantics.md): a header naming the tool, one `  - path: message` line per
 * error (util/schema-errors.ts piSchemaErrorLines), a blank line, "Received arguments:" and the
 * arguments as 2-space-indented JSON.
 */
import type { TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { Value } from "typebox/value";
import type { AnyTool } from "../tools/index.js";
import { cloneSharingStrings, piSchemaErrorLines } from "../util/index.js";

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

/** Pi's validation error text for `toolName` with the given error lines and the arguments as received. */
export function formatValidationError(toolName: string, lines: string[], received: unknown): string {
  const json = JSON.stringify(received, null, 2) ?? String(received);
  return `Validation failed for tool "${toolName}":\n${lines.join("\n")}\n\nReceived arguments:\n${json}`;
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
      const reason = err instanceof Error ? err.message : String(err);
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
