#!/usr/bin/env node
// Entry point of the `warden` CLI; the code is compiled to dist/ by `npm run build`.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error("warden: dist/ is missing. Run 'npm run build' first (or 'npm run setup').");
  process.exit(2);
}
await import(main.href);
