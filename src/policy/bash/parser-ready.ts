/**
 * The public way to load the bash parser: the same load as bash/parser.ts's (once per process,
 * about 10-30 ms), declared without web-tree-sitter's types, so that the package's public
 * declarations never reach them (they need @types/emscripten; TypeScript 7 reports "Cannot find
 * name 'EmscriptenModule'" without it).
 */
import { loadBashParser as loadParser } from "./parser.js";

/** Resolves once the bash parser is loaded (later calls wait for the same load). */
export async function loadBashParser(): Promise<void> {
  await loadParser();
}
