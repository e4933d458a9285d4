#!/usr/bin/env node
// Entry point of the `warden` CLI; the code is compiled to dist/ by `npm run build`.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// An older Node than package.json's engines (">=X.Y.Z") stops here, before any dependency loads and
// fails in its own words. npm only warns (EBADENGINE) when it installs warden on one.
const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines;
const need = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(engines?.node ?? "");
const have = process.versions.node.split(".").map(Number);
if (need) {
  const wanted = need.slice(1).map(Number);
  const older = wanted.findIndex((n, i) => have[i] !== n);
  if (older >= 0 && have[older] < wanted[older]) {
    console.error(
      `warden: needs Node.js ${wanted.join(".")} or newer; this is Node.js ${process.versions.node}. ` +
        'Install Node.js 24 (LTS) or 26 and run warden with it (in a clone: export PATH="$(bash scripts/ensure-node.sh 24):$PATH").',
    );
    process.exit(2);
  }
}

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error("warden: dist/ is missing. Run 'npm run build' first (or 'npm run setup').");
  process.exit(2);
}
await import(main.href);
