/**
 * Byte accounting for spill files. Every session has a budget of its own (default 256 MiB); in
 * `warden serve` its sessions also draw on their tenant's budget (quotas.spillBytes), shared by all
 * of the tenant's live sessions. A write takes what every budget it draws on still has room for;
 * bytes come back when their file is deleted (an uncut output, or the session closing).
 */
import { InvalidArgumentError } from "../errors.js";
import type { SpillCap } from "../tools/index.js";

/** Default cap on a session's spill files together: 256 MiB. */
export const DEFAULT_SPILL_SESSION_MAX_BYTES = 256 * 1024 * 1024;

/** One cap and the bytes currently held under it. */
export class SpillBudget implements SpillCap {
  #usedBytes = 0;

  /** `limitBytes`: a non-negative integer (0 keeps nothing). Throws InvalidArgumentError otherwise. */
  constructor(
    readonly scope: SpillCap["scope"],
    readonly limitBytes: number,
    readonly raiseHint: string,
  ) {
    if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
      throw new InvalidArgumentError(
        `The ${scope} spill cap must be a non-negative integer of bytes, got ${limitBytes}; set ${raiseHint}.`,
      );
    }
  }

  /** Bytes held by live spill files under this cap. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Bytes still free. */
  get roomBytes(): number {
    return this.limitBytes - this.#usedBytes;
  }

  /** Gives back `bytes` taken earlier (their file was deleted, or the write failed). */
  give(bytes: number): void {
    this.#usedBytes = Math.max(0, this.#usedBytes - bytes);
  }

  /** Takes `bytes` unconditionally; callers take at most roomBytes (see takeSpillBytes). */
  take(bytes: number): void {
    this.#usedBytes += bytes;
  }
}

/** What takeSpillBytes granted, and the budget that refused the rest (the first with the least room). */
export interface SpillGrant {
  grantedBytes: number;
  limitedBy?: SpillBudget;
}

/**
 * Takes up to `bytes` from every budget in `budgets` at once: the grant is the least room among
 * them, so no budget ever goes over its limit. `limitedBy` is set when less than `bytes` was granted.
 */
export function takeSpillBytes(budgets: readonly SpillBudget[], bytes: number): SpillGrant {
  let grantedBytes = bytes;
  let limitedBy: SpillBudget | undefined;
  for (const budget of budgets) {
    if (budget.roomBytes < grantedBytes) {
      grantedBytes = Math.max(0, budget.roomBytes);
      limitedBy = budget;
    }
  }
  for (const budget of budgets) budget.take(grantedBytes);
  return limitedBy ? { grantedBytes, limitedBy } : { grantedBytes };
}
