/**
 * `npm run bench [section…]`: runs the benchmark sections (all, or those named) and prints one
 * table per section; ratios compare warden with a baseline measured in the same run.
 */
import { formatRows } from "./harness.js";
import { sections } from "./sections/index.js";

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !sections.some((s) => s.name === w));
if (unknown.length > 0) {
  console.error(
    `unknown section(s): ${unknown.join(", ")}; sections: ${sections.map((s) => s.name).join(", ")}`,
  );
  process.exit(2);
}
let failed = false;
for (const section of sections) {
  if (wanted.length > 0 && !wanted.includes(section.name)) continue;
  console.log(`# ${section.name}: ${section.description}`);
  try {
    console.log(formatRows(section.name, await section.run()));
  } catch (err) {
    failed = true;
    console.error(`${section.name} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  console.log("");
}
process.exit(failed ? 1 : 0);
