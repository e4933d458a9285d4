/**
 * The bash parser: tree-sitter-bash compiled to WASM, run by web-tree-sitter. Loaded once per
 * process (about 10-30 ms) and cached; parsing a typical command then takes microseconds.
 */
import { createRequire } from "node:module";
import { Language, type Node, Parser } from "web-tree-sitter";

let loading: Promise<Parser> | undefined;
let loaded: Parser | undefined;

/** Loads the parser (once; later calls return the same promise). */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    await Parser.init();
    const wasm = createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm");
    const parser = new Parser();
    parser.setLanguage(await Language.load(wasm));
    loaded = parser;
    return parser;
  })();
  return loading;
}

/**
 * Parses `script` and hands the root node to `visit`; the tree is freed afterwards (WASM memory).
 * Requires loadBashParser() to have resolved; throws otherwise.
 */
export function withBashTree<T>(script: string, visit: (root: Node) => T): T {
  if (!loaded) throw new Error("bash parser not loaded: await loadBashParser() first");
  const tree = loaded.parse(script);
  if (!tree) throw new Error("bash parser returned no tree");
  try {
    return visit(tree.rootNode);
  } finally {
    tree.delete();
  }
}
