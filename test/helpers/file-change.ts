/** Builders of review FileChange values for tests. */
import type { FileChange } from "../../src/review/index.js";

/** A new regular file (mode 0644) at `path` holding `text`. */
export const addedFile = (path: string, text: string): FileChange => ({
  path,
  kind: "added",
  oldBytes: null,
  newBytes: Buffer.from(text),
  mode: 0o644,
});
