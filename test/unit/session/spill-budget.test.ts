import { describe, expect, it } from "vitest";
import {
  DEFAULT_SPILL_SESSION_MAX_BYTES,
  SpillBudget,
  takeSpillBytes,
} from "../../../src/session/spill-budget.js";

describe("spill budgets", () => {
  it("the session default is 256 MiB", () => {
    expect(DEFAULT_SPILL_SESSION_MAX_BYTES).toBe(268_435_456);
  });

  it("a grant is the least room of every budget, taken from all of them; the one with less room is named", () => {
    const session = new SpillBudget("session", 100, "--spill-max-bytes");
    const tenant = new SpillBudget("tenant", 150, "quotas.spillBytes");
    expect(takeSpillBytes([session, tenant], 60)).toEqual({ grantedBytes: 60 });
    expect(takeSpillBytes([session, tenant], 60)).toEqual({ grantedBytes: 40, limitedBy: session });
    expect([session.usedBytes, tenant.usedBytes]).toEqual([100, 100]);
    expect(takeSpillBytes([session, tenant], 1)).toEqual({ grantedBytes: 0, limitedBy: session });

    const other = new SpillBudget("session", 100, "--spill-max-bytes");
    expect(takeSpillBytes([other, tenant], 70)).toEqual({ grantedBytes: 50, limitedBy: tenant });
    expect([other.usedBytes, tenant.usedBytes]).toEqual([50, 150]);
    expect(tenant.roomBytes).toBe(0);
  });

  it("give returns bytes and never goes below zero", () => {
    const b = new SpillBudget("tenant", 10, "quotas.spillBytes");
    takeSpillBytes([b], 7);
    b.give(3);
    expect(b.usedBytes).toBe(4);
    b.give(100);
    expect(b.usedBytes).toBe(0);
  });

  it("refuses a limit that is not a non-negative integer, naming how to set it", () => {
    expect(() => new SpillBudget("tenant", 1.5, "quotas.spillBytes")).toThrow(
      "The tenant spill cap must be a non-negative integer of bytes, got 1.5; set quotas.spillBytes.",
    );
  });
});
