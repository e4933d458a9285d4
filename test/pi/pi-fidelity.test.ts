/**
 * `npm run test:pi`: the differential suite. Each corpus runs through the real Pi 0.73.1 (its own
 * tools, driven by pi-agent-core's agent loop, inside a throwaway sandbox container) and through a
 * warden session, from the same starting workspace; the results are compared call by call. Every
 * difference must be one of the listed known differences (known-differences.ts, docs/pi-fidelity.md),
 * else the suite fails and names the call. A report per corpus is written to
 * $WARDEN_PI_REPORT_DIR (default: <tmpdir>/warden-pi-fidelity).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { describeEngine } from "../helpers/engine.js";
import { agreement, type CallComparison, compareResults } from "./compare.js";
import { generatedCorpus } from "./corpus-generated.js";
import { sessionCorpus, writeSessionTree } from "./corpus-session.js";
import { writeWorkspace } from "./corpus-workspace.js";
import { knownDifferences } from "./known-differences.js";
import { type CorpusCall, runPiBatches } from "./pi-container.js";
import { runWardenBatches } from "./warden-side.js";

/** Seed of the generated corpus (any seed must pass; this one is what CI and docs/pi-fidelity.md use). */
const SEED = 20261201;
const reportDir = process.env.WARDEN_PI_REPORT_DIR ?? join(tmpdir(), "warden-pi-fidelity");
const workspaces: string[] = [];

afterAll(async () => {
  for (const dir of workspaces) await rm(dir, { recursive: true, force: true });
});

async function differential(
  name: string,
  batches: CorpusCall[][],
  fill: (dir: string) => Promise<void> | void,
) {
  const dir = await mkdtemp(join(tmpdir(), `warden-pi-${name}-`));
  workspaces.push(dir);
  await fill(dir);
  const [pi, warden] = await Promise.all([runPiBatches(dir, batches), runWardenBatches(dir, batches)]);
  const comparisons = compareResults(batches.flat(), pi, warden);
  const figures = agreement(comparisons);
  await mkdir(reportDir, { recursive: true });
  const differing = comparisons.filter((c) => c.known?.length !== 0);
  await writeFile(
    join(reportDir, `${name}.json`),
    JSON.stringify({ figures, differences: differing.map(describe) }, null, 1),
  );
  console.log(
    `[pi fidelity] ${name}: ${JSON.stringify(figures)} (report: ${join(reportDir, `${name}.json`)})`,
  );
  return { comparisons, figures };
}

function describe(c: CallComparison) {
  return {
    id: c.call.id,
    tool: c.call.name,
    arguments: c.call.arguments,
    known: c.known ?? "UNEXPLAINED",
    pi: { isError: c.pi.isError, text: c.piText.slice(0, 2000) },
    warden: { isError: c.warden.isError, text: c.wardenText.slice(0, 2000) },
  };
}

function expectAllExplained(comparisons: CallComparison[]) {
  const unexplained = comparisons.filter((c) => c.known === undefined).map(describe);
  expect(
    unexplained,
    "differences that are in none of docs/pi-fidelity.md's lists (warden faults to fix)",
  ).toEqual([]);
}

it("docs/pi-fidelity.md lists every known difference, in its list, with its wording", async () => {
  const section = await readFile(join(import.meta.dirname, "../../docs/pi-fidelity.md"), "utf8");
  const heading = {
    safety: "**Deliberate safety differences**",
    "pi-bug": "**Pi bugs",
    wording: "**Harmless wording",
  };
  for (const d of knownDifferences) {
    const line = `- \`${d.id}\`: ${d.summary}`;
    expect(section, d.id).toContain(line);
    const list = section.slice(section.indexOf(heading[d.kind]));
    expect(list.split("\n\n")[1]?.split("\n"), `${d.id} is in the ${d.kind} list`).toContain(line);
  }
});

describeEngine("Pi fidelity: real Pi 0.73.1 vs warden, call by call", () => {
  it("generated corpus: every difference is a listed one", async () => {
    const batches = generatedCorpus(SEED);
    expect(batches.flat().length).toBeGreaterThanOrEqual(500);
    const { comparisons, figures } = await differential("generated", batches, (dir) =>
      writeWorkspace(dir, SEED),
    );
    expect(figures.calls).toBe(batches.flat().length);
    expectAllExplained(comparisons);
  });

  it("recorded Pi session: every difference is a listed one", async () => {
    const batches = sessionCorpus();
    expect(batches.flat().length).toBeGreaterThan(300);
    const { comparisons } = await differential("session", batches, writeSessionTree);
    expectAllExplained(comparisons);
  });
});
