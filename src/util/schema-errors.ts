/**
 * Readable text for TypeBox validation errors: an unknown field or a missing one is named (the
 * raw messages only say "must not have additional properties"), and the `boolean` sub-errors
 * TypeBox adds beside them are dropped.
 */

/** The parts of a TypeBox `Errors()` entry used here. */
export interface SchemaErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/**
 * One line per meaningful error, `at(instancePath)` naming the place: "<at> has unknown field 'x'",
 * "<at> is missing required field(s) a, b", or "<at> <message>".
 */
export function schemaErrorLines(
  errors: Iterable<SchemaErrorLike>,
  at: (instancePath: string) => string,
): string[] {
  const lines: string[] = [];
  for (const e of errors) {
    if (e.keyword === "boolean") continue;
    const where = at(e.instancePath);
    if (e.keyword === "additionalProperties") {
      const names = (e.params.additionalProperties as unknown[] | undefined) ?? [];
      const list = names.map((n) => `'${String(n)}'`).join(", ");
      lines.push(`${where} has unknown field${names.length === 1 ? "" : "s"} ${list}`);
    } else if (e.keyword === "required") {
      const missing = (e.params.requiredProperties as unknown[] | undefined)?.join(", ") ?? "?";
      lines.push(`${where} is missing required field(s) ${missing}`);
    } else {
      lines.push(`${where} ${e.message}`);
    }
  }
  return lines;
}
