#!/usr/bin/env node
// Writes docs/openapi.json from the routes' schemas (run `npm run build` first; `npm run openapi`
// does both). With --check, exits 1 when the committed copy differs instead of writing it.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const target = fileURLToPath(new URL("../docs/openapi.json", import.meta.url));
const { openApiText } = await import(
  new URL("../dist/server/http/openapi-document.js", import.meta.url).href
);
const text = await openApiText();
if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== text) {
    console.error("docs/openapi.json is stale: run 'npm run openapi' and commit the result.");
    process.exit(1);
  }
  console.log("docs/openapi.json is up to date.");
} else {
  await writeFile(target, text);
  console.log(`wrote ${target}`);
}
