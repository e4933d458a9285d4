import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { abortFanOut } from "../../../src/util/index.js";

describe("abortFanOut", () => {
  it("keeps one listener on the parent for any number of children, and none after dispose", () => {
    const parent = new AbortController();
    const fan = abortFanOut(parent.signal);
    const children = Array.from({ length: 20 }, () => fan.child());
    expect(getEventListeners(parent.signal, "abort").length).toBe(1);
    fan.dispose();
    expect(getEventListeners(parent.signal, "abort").length).toBe(0);
    expect(children.some((c) => c.aborted)).toBe(false);
  });

  it("aborts every child with the parent's reason; a child made after that is born aborted", () => {
    const parent = new AbortController();
    const fan = abortFanOut(parent.signal);
    const before = fan.child();
    parent.abort("stop");
    const after = fan.child();
    expect([before.aborted, before.reason, after.aborted, after.reason]).toEqual([
      true,
      "stop",
      true,
      "stop",
    ]);
    fan.dispose();
  });

  it("gives never-firing children without a parent", () => {
    const fan = abortFanOut(undefined);
    expect(fan.child().aborted).toBe(false);
    fan.dispose();
  });
});
