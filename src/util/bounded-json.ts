/**
 * JSON text of a value the client chose, bounded in characters and nesting: for echoing it in an
 * error (issue 37, item 2: a 600 KB tool call's pretty-printed echo was 37 MB, and one nested
 * 12,000 deep grew with the square of its depth). Within both bounds the text is exactly
 * `JSON.stringify(value, null, indent)`; past them a value deeper than `maxDepth` is `[…]` or
 * `{…}` and the text stops at `maxChars`. Work is bounded too: rendering stops at the cut, and a
 * long string is cut before it is escaped.
 */

/** Bounds of boundedJson; both are required. */
export interface BoundedJsonOptions {
  /** Characters (UTF-16 code units) of text at most. */
  maxChars: number;
  /** Levels of objects and arrays shown (the value itself is level 1); deeper ones are `[…]` / `{…}`. */
  maxDepth: number;
  /** Spaces per level, as JSON.stringify's third argument. Default 2. */
  indent?: number;
}

/** The text, and whether a bound cut it (then it is shorter than the whole JSON). */
export interface BoundedJsonResult {
  text: string;
  cut: boolean;
}

/**
 * `value` as JSON within `options`' bounds (see module doc); undefined, functions and symbols are
 * left out or become null as JSON.stringify does, and a value that has no JSON is `String(value)`.
 */
export function boundedJson(value: unknown, options: BoundedJsonOptions): BoundedJsonResult {
  const { maxChars, maxDepth } = options;
  const unit = " ".repeat(options.indent ?? 2);
  let out = "";
  let cut = false;
  const full = () => out.length > maxChars;
  const leaf = (v: unknown): string | undefined => {
    if (typeof v === "string" && v.length > maxChars) {
      cut = true;
      return JSON.stringify(v.slice(0, maxChars + 1));
    }
    return JSON.stringify(v);
  };
  const render = (raw: unknown, depth: number, pad: string): boolean => {
    const v =
      raw !== null && typeof raw === "object" && typeof (raw as { toJSON?: unknown }).toJSON === "function"
        ? (raw as { toJSON: () => unknown }).toJSON()
        : raw;
    if (v === null || typeof v !== "object") {
      const text = leaf(v);
      if (text === undefined) return false;
      out += text;
      return true;
    }
    const array = Array.isArray(v);
    const keys = array ? null : Object.keys(v);
    if ((array ? v.length : (keys as string[]).length) === 0) {
      out += array ? "[]" : "{}";
      return true;
    }
    if (depth > maxDepth) {
      out += array ? "[…]" : "{…}";
      cut = true;
      return true;
    }
    const inner = pad + unit;
    out += array ? "[" : "{";
    let first = true;
    const count = array ? v.length : (keys as string[]).length;
    for (let k = 0; k < count && !full(); k++) {
      const mark = out.length;
      out += `${first ? "" : ","}\n${inner}`;
      if (array) {
        if (!render(v[k], depth + 1, inner)) out += "null";
      } else {
        const key = (keys as string[])[k] as string;
        out += `${leaf(key)}: `;
        if (!render((v as Record<string, unknown>)[key], depth + 1, inner)) {
          out = out.slice(0, mark);
          continue;
        }
      }
      first = false;
    }
    out += first ? (array ? "]" : "}") : `\n${pad}${array ? "]" : "}"}`;
    return true;
  };
  if (!render(value, 1, "")) return { text: String(value), cut: false };
  if (full()) return { text: out.slice(0, maxChars), cut: true };
  return { text: out, cut };
}
