/** The shapes of test/pi/known-differences.ts: what a listed difference looks at, and one listed difference. */

/** What a listed difference looks at: the call and both sides' normalised texts and error flags. */
export interface DiffInput {
  tool: string;
  args: Record<string, unknown> | string;
  pi: string;
  warden: string;
  piError: boolean;
  wardenError: boolean;
}

/** One listed difference. */
export interface KnownDifference {
  id: string;
  kind: "safety" | "wording" | "pi-bug";
  /** Its wording in docs/pi-fidelity.md. */
  summary: string;
  /** True when this difference alone accounts for the call's whole disagreement. */
  explains?(d: DiffInput): boolean;
  /** Rewrites one or both texts where this difference shows; the rest must then agree. */
  rewrite?(d: DiffInput): { pi: string; warden: string };
}
