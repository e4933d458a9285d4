import { test } from "vitest";
// Dev only
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agreement, compareResults } from "./compare.js";
import { generatedCorpus } from "./corpus-generated.js";
import { writeWorkspace } from "./corpus-workspace.js";
import { runPiBatches } from "./pi-container.js";
import { runWardenBatches } from "./warden-side.js";

test("dev", async () => {
const dir = await mkdtemp(join(tmpdir(), "pi-dev-ws-"));
await writeWorkspace(dir, 1);
const batches = generatedCorpus(1);
console.log("calls", batches.flat().length, "batches", batches.length);
const [pi, warden] = await Promise.all([runPiBatches(dir, batches), runWardenBatches(dir, batches)]);
const cmp = compareResults(batches.flat(), pi, warden);
await writeFile("/tmp/pi-dev.json", JSON.stringify(cmp.filter((c) => !c.known).map((c) => ({ id: c.call.id, args: c.call.arguments, piErr: c.pi.isError, wErr: c.warden.isError, pi: c.piText, w: c.wardenText })), null, 1));
console.log(JSON.stringify(agreement(cmp)));
console.log("unexplained", cmp.filter((c) => !c.known).length);
});
