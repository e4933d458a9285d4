/**
 * Readable text for TypeBox validation errors, the one module that words them: warden's own wording
 * (server configuration, request bodies), where an unknown field or a missing one is named (the raw
 * messages only say "must not have additional properties") and the `boolean` sub-errors TypeBox adds
 * beside them are dropped; and Pi's wording of tool-argument errors (pi-mono `validateToolArguments`),
 * which the model sees and the Pi differential suite compares.
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

/** Decodes a JSON pointer (`/edits/0/oldText`) into a dotted path (`edits.0.oldText`); "" stays "". */
export function dottedPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

/**
 * Pi's `  - path: message` lines of tool-argument errors: all errors, "root" for the empty path, and one
 * line per missing required field with the field appended to its object's path.
 */
export function piSchemaErrorLines(errors: Iterable<SchemaErrorLike>): string[] {
  const lines: string[] = [];
  for (const e of errors) {
    const base = dottedPath(e.instancePath);
    const required = e.params.requiredProperties;
    if (e.keyword === "required" && Array.isArray(required)) {
      for (const field of required) {
        const path = base === "" ? String(field) : `${base}.${String(field)}`;
        lines.push(`  - ${path}: must have required property '${String(field)}'`);
      }
    } else {
      lines.push(`  - ${base === "" ? "root" : base}: ${e.message}`);
    }
  }
  return lines;
}
