/**
 * The listed differences between Pi 0.73.1 and warden (README "Pi fidelity"). Each is one of:
 * - `safety`: a documented deliberate safety difference;
 * - `wording`: harmless wording kept on purpose;
 * - `pi-bug`: a Pi bug that warden does not copy (with its case).
 * A difference matching none of these fails the suite: it is a warden fault to fix.
 */
import type { CallComparison } from "./compare.js";

/** One listed difference: what it is, and which compared calls it explains. */
export interface KnownDifference {
  id: string;
  kind: "safety" | "wording" | "pi-bug";
  /** The README's wording of it. */
  summary: string;
  matches(c: CallComparison): boolean;
}

export const knownDifferences: KnownDifference[] = [];
