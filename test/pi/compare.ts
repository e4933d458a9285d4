/**
 * Call-by-call comparison of Pi's and warden's results. Before comparing, the text is normalised
 * only where the two cannot agree by construction (docs/pi-fidelity.md, normalisations):
 * - the path of the file holding a cut command's full output (random on both sides);
 * - the path of npm's debug log, named by the time npm ran (`~/.npm/_logs/<time>-debug-0.log`);
 * - a file time as `ls -l` shows it (`Dec  7 01:06`): files the calls make get the time they ran at;
 * - an image block becomes `[image <mime> <width>x<height>]` (the bytes of a re-encoded image
 *   depend on the encoder; type and size are what the model sees).
 * Every remaining difference must match one of the listed known differences (known-differences.ts).
 */
import type { ToolContent } from "../../src/tools/types.js";
import type { DiffInput } from "./difference-types.js";
import { knownDifferences } from "./known-differences.js";
import type { CallResult, CorpusCall } from "./pi-container.js";

const FULL_OUTPUT_PATH = /Full output: \S+\.log\]/g;
const NPM_LOG_PATH = /\/\.npm\/_logs\/\S+-debug-\d+\.log/g;
const LS_TIME = /\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d\b/g;

/** Width and height from a PNG, GIF or JPEG header; undefined when it cannot be read. */
export function imageSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47) {
    return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  }
  if (data.length >= 10 && data.toString("latin1", 0, 3) === "GIF") {
    return { width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  }
  if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8) {
    let i = 2;
    while (i + 9 < data.length) {
      if (data[i] !== 0xff) return undefined;
      const marker = data[i + 1] ?? 0;
      const length = data.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: data.readUInt16BE(i + 7), height: data.readUInt16BE(i + 5) };
      }
      i += 2 + length;
    }
  }
  return undefined;
}

/** The compared text of one result: text blocks joined, images described, spill paths masked. */
export function normalisedText(content: ToolContent[]): string {
  return content
    .map((block) => {
      if (block.type === "text")
        return block.text
          .replace(FULL_OUTPUT_PATH, "Full output: <full-output-path>]")
          .replace(NPM_LOG_PATH, "/.npm/_logs/<npm-debug-log>")
          .replace(LS_TIME, "<time>");
      const size = imageSize(Buffer.from(block.data, "base64"));
      return `[image ${block.mimeType} ${size ? `${size.width}x${size.height}` : "unreadable"}]`;
    })
    .join("\n");
}

/**
 * The listed differences that account for a disagreement: [] when the two agree, one id when a
 * difference explains the whole call, else the rewrites that make them agree (undefined if none do).
 */
export function explain(
  call: CorpusCall,
  pi: CallResult,
  warden: CallResult,
  piText: string,
  wardenText: string,
): string[] | undefined {
  if (pi.isError === warden.isError && piText === wardenText) return [];
  const args = (
    typeof call.arguments === "string" ? call.arguments : (call.arguments ?? {})
  ) as DiffInput["args"];
  let d: DiffInput = {
    tool: call.name,
    args,
    pi: piText,
    warden: wardenText,
    piError: pi.isError,
    wardenError: warden.isError,
  };
  const used: string[] = [];
  for (const known of knownDifferences) {
    if (known.explains?.(d)) return [...used, known.id];
    if (!known.rewrite) continue;
    const next = known.rewrite(d);
    if (next.pi !== d.pi || next.warden !== d.warden) {
      used.push(known.id);
      d = { ...d, pi: next.pi, warden: next.warden };
    }
    if (d.piError === d.wardenError && d.pi === d.warden) return used;
  }
  return undefined;
}

/** One compared call. */
export interface CallComparison {
  call: CorpusCall;
  pi: CallResult;
  warden: CallResult;
  piText: string;
  wardenText: string;
  isErrorAgrees: boolean;
  textAgrees: boolean;
  /** Ids of the listed differences explaining a disagreement; empty when they agree; undefined when none does. */
  known?: string[] | undefined;
}

/** Compares the results of `calls` (matched by toolCallId). Throws when a side lacks a result. */
export function compareResults(
  calls: CorpusCall[],
  pi: CallResult[],
  warden: CallResult[],
): CallComparison[] {
  const byId = (results: CallResult[]) => new Map(results.map((r) => [r.toolCallId, r]));
  const piById = byId(pi);
  const wardenById = byId(warden);
  return calls.map((call) => {
    const p = piById.get(call.id);
    const w = wardenById.get(call.id);
    if (!p || !w) throw new Error(`call ${call.id}: no result from ${p ? "warden" : "Pi"}`);
    const piText = normalisedText(p.content);
    const wardenText = normalisedText(w.content);
    const comparison: CallComparison = {
      call,
      pi: p,
      warden: w,
      piText,
      wardenText,
      isErrorAgrees: p.isError === w.isError,
      textAgrees: piText === wardenText,
    };
    comparison.known = explain(call, p, w, piText, wardenText);
    return comparison;
  });
}

/** Agreement figures over `comparisons`. */
export function agreement(comparisons: CallComparison[]): {
  calls: number;
  isErrorAgree: number;
  textAgree: number;
  byKnown: Record<string, number>;
  unexplained: number;
} {
  const byKnown: Record<string, number> = {};
  let unexplained = 0;
  for (const c of comparisons) {
    if (c.isErrorAgrees && c.textAgrees) continue;
    if (!c.known) unexplained++;
    for (const id of c.known ?? []) byKnown[id] = (byKnown[id] ?? 0) + 1;
  }
  return {
    calls: comparisons.length,
    isErrorAgree: comparisons.filter((c) => c.isErrorAgrees).length,
    textAgree: comparisons.filter((c) => c.textAgrees).length,
    byKnown,
    unexplained,
  };
}
