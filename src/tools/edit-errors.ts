/**
 * Words the edit tool's failures for the model. Not-found messages carry a recovery hint, which Pi's
 * lacked (earendil-works/pi#4430, #8654), including the tabs-versus-spaces case
 * (anthropics/claude-code#9163: spaces are never written silently into a tab-indented file).
 */
import type { EditFailure, NotFoundHint } from "./edit-match.js";

const RECOVERY =
  "Read the file again with the read tool and copy oldText exactly from it (indentation, blank lines and " +
  "punctuation included), or use a shorter oldText that is unique.";

/** The message for `failure` in the file `path`; `count` is the number of edits in the call. */
export function describeEditFailure(failure: EditFailure, path: string, count: number): string {
  const which = (i: number): string => (count === 1 ? "the text" : `edits[${i}].oldText`);
  switch (failure.kind) {
    case "empty-old-text":
      return (
        `${count === 1 ? "oldText" : `edits[${failure.index}].oldText`} is empty. Give the exact text to replace; ` +
        "to create or overwrite a whole file use write."
      );
    case "not-found":
      return (
        `Could not find ${count === 1 ? "the exact text" : `edits[${failure.index}].oldText`} in ${path}. The old text must match exactly including all ` +
        `whitespace and newlines.${failure.hint ? ` ${describeHint(failure.hint)}` : ""} ${RECOVERY}`
      );
    case "ambiguous":
      return (
        `Found ${failure.count} occurrences of ${which(failure.index)} in ${path}. The text must be unique. ` +
        "Please provide more context to make it unique."
      );
    case "overlap":
      return (
        `edits[${failure.first}] and edits[${failure.second}] overlap in ${path}. Merge them into one edit, ` +
        "or make their oldText regions disjoint."
      );
    case "no-change":
      return `No changes made to ${path}. The replacement produced identical content.`;
  }
}

function describeHint(hint: NotFoundHint): string {
  switch (hint.kind) {
    case "file-uses-tabs":
      return (
        `The text appears at line ${hint.line} with different indentation: the file indents with tabs, ` +
        "but your oldText uses spaces. Use tab characters in oldText and newText."
      );
    case "file-uses-spaces":
      return (
        `The text appears at line ${hint.line} with different indentation: the file indents with spaces, ` +
        "but your oldText uses tabs. Use the file's spaces in oldText and newText."
      );
    case "indentation":
      return `The text appears at line ${hint.line} with different indentation.`;
    case "exact-only":
      return (
        `The file is over ${hint.limitChars} characters, so only an exact match was tried (the fuzzy ` +
        "comparison of quotes, dashes and trailing blanks is limited to smaller files)."
      );
  }
}
