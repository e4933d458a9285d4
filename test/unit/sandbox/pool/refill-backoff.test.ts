import { describe, expect, it } from "vitest";
import { NoRoomError } from "../../../../src/errors.js";
import {
  nextRefillBackoffMs,
  type PoolBackend,
  REFILL_BACKOFF,
  retryAfterSecondsOf,
  WarmPool,
} from "../../../../src/sandbox/index.js";
import { FakeSandbox } from "../../../helpers/fake-sandbox.js";

describe("nextRefillBackoffMs", () => {
  it("doubles from 2 s up to 60 s by default", () => {
    const waits: number[] = [];
    let wait: number | undefined;
    for (let i = 0; i < 8; i++) {
      wait = nextRefillBackoffMs(wait);
      waits.push(wait);
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(REFILL_BACKOFF).toEqual({ firstMs: 2000, maxMs: 60_000 });
  });

  it("follows a given schedule, never past its maximum", () => {
    expect(nextRefillBackoffMs(undefined, { firstMs: 500, maxMs: 300 })).toBe(300);
    expect(nextRefillBackoffMs(250, { firstMs: 100, maxMs: 300 })).toBe(300);
    expect(nextRefillBackoffMs(100, { firstMs: 100, maxMs: 300 })).toBe(200);
  });
});

describe("retryAfterSecondsOf", () => {
  it("is the back-off wait in whole seconds, rounded up, at least 1", () => {
    expect([2000, 4000, 60_000, 2001, 20, 0].map(retryAfterSecondsOf)).toEqual([2, 4, 60, 3, 1, 1]);
  });
});

class NoRoom extends Error {}

/** A backend whose first `failures` prepares find no room; counts prepares and those in flight. */
function noRoomBackend(failures: number) {
  const seen = {
    prepares: 0,
    inFlight: 0,
    maxInFlightBackingOff: 0,
    backingOff: false,
    failures,
    coldNoRoom: false,
  };
  const backend: PoolBackend<object, number> = {
    keyOf: async () => "k",
    prepare: async () => {
      const n = ++seen.prepares;
      seen.inFlight++;
      if (seen.backingOff) seen.maxInFlightBackingOff = Math.max(seen.maxInFlightBackingOff, seen.inFlight);
      await new Promise((r) => setTimeout(r, 2));
      seen.inFlight--;
      if (seen.failures-- > 0) throw new NoRoom("0/1 nodes are available: 1 Insufficient cpu.");
      return n;
    },
    handOver: async (p) => new FakeSandbox({ info: { containerId: `c${p}` } }),
    createCold: async () => {
      if (seen.coldNoRoom) throw new NoRoomError("no node takes the Pod");
      return new FakeSandbox();
    },
    alive: () => true,
    discard: async () => {},
    noRoom: (err) => (err instanceof NoRoom ? err.message : undefined),
  };
  return { backend, seen };
}

describe("WarmPool back-off when spares find no room", () => {
  it("waits 20, 40, 80, 80 ms between single tries, logs each wait once, and resets on a spare that starts", async () => {
    const { backend, seen } = noRoomBackend(5);
    const waits: number[] = [];
    const logs: string[] = [];
    const stats: (number | undefined)[] = [];
    const pool = new WarmPool({
      backend,
      size: 2,
      backoff: { firstMs: 20, maxMs: 80 },
      onBackoff: (_key, waitMs) => {
        seen.backingOff = true;
        waits.push(waitMs);
        stats.push(pool.stats()[0]?.backoffMs);
      },
      log: (m) => logs.push(m),
    });
    await pool.warm({});
    await pool.settled();
    // Two first spares fail together (one wait), then one try per wait: 3 more failures, then 2 spares.
    expect(waits).toEqual([20, 40, 80, 80]);
    expect(stats).toEqual(waits);
    expect(seen.prepares).toBe(7);
    expect(seen.maxInFlightBackingOff).toBe(1);
    expect(logs).toEqual(
      waits.map(
        (w) =>
          `pool: no room for a spare of key k… (the scheduler: "0/1 nodes are available: 1 Insufficient cpu."); spare withdrawn, next try in ${w / 1000} s`,
      ),
    );
    expect(pool.stats()).toEqual([{ key: "k", idle: 2, filling: 0, size: 2 }]);
    // Reset: the next spare that finds no room waits the first wait again.
    seen.failures = 1;
    await pool.claim({});
    await pool.settled();
    expect(waits).toEqual([20, 40, 80, 80, 20]);
    expect(pool.stats()).toEqual([{ key: "k", idle: 2, filling: 0, size: 2 }]);
    await pool.drain();
  });

  it("drains at once during a long wait", async () => {
    const { backend } = noRoomBackend(Number.POSITIVE_INFINITY);
    // A wait past the test's timeout: a drain that waited for it would time the test out.
    const pool = new WarmPool({ backend, size: 1, backoff: { firstMs: 600_000, maxMs: 600_000 } });
    await pool.warm({});
    await expect.poll(() => pool.stats()[0]?.backoffMs).toBe(600_000);
    await pool.drain();
  });

  it("a cold create that finds no room while the key backs off retries after the key's wait (HTTP Retry-After)", async () => {
    const { backend, seen } = noRoomBackend(Number.POSITIVE_INFINITY);
    seen.coldNoRoom = true;
    const pool = new WarmPool({ backend, size: 1, backoff: { firstMs: 7500, maxMs: 7500 } });
    // The key is not backing off yet at the first claim: the error carries no wait of its own.
    const first = await pool.claim({}).catch((err: NoRoomError) => err);
    expect([first instanceof NoRoomError, (first as NoRoomError).retryAfterSeconds]).toEqual([
      true,
      undefined,
    ]);
    await expect.poll(() => pool.stats()[0]?.backoffMs).toBe(7500);
    const second = await pool.claim({}).catch((err: NoRoomError) => err);
    expect([second instanceof NoRoomError, (second as NoRoomError).retryAfterSeconds]).toEqual([true, 8]);
    await pool.drain();
  });
});
