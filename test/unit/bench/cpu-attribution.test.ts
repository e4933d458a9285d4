/** The noisy-neighbour bench's CPU attribution, pure parts: differences of readings and the top consumers. */
import { describe, expect, it } from "vitest";
import { cpuDeltas, topConsumers } from "../../../bench/sections/cpu-attribution.js";

describe("cpuDeltas", () => {
  it("counts a consumer that started during the phase from 0 and a reused pid's drop as 0", () => {
    const before = new Map([
      ["server: main thread", 1000],
      ["dockerd", 500],
    ]);
    const after = new Map([
      ["server: main thread", 1450],
      ["dockerd", 200],
      ["A: sha256sum", 30],
    ]);
    expect(cpuDeltas(before, after)).toEqual(
      new Map([
        ["server: main thread", 450],
        ["dockerd", 0],
        ["A: sha256sum", 30],
      ]),
    );
  });
});

describe("topConsumers", () => {
  it("gives CPU ms per unit (here 2 s), largest first (ties by name), without those under 1 ms per unit", () => {
    const deltas = new Map([
      ["b", 400],
      ["a", 400],
      ["c", 1000],
      ["tiny", 1],
    ]);
    expect(topConsumers(deltas, 2, 10)).toEqual([
      { name: "c", ms: 500 },
      { name: "a", ms: 200 },
      { name: "b", ms: 200 },
    ]);
    expect(topConsumers(deltas, 2, 1)).toEqual([{ name: "c", ms: 500 }]);
    expect(topConsumers(deltas, 0, 10)).toEqual([]);
  });
});
