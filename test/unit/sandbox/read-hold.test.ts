import { describe, expect, it } from "vitest";
import { ReadHold } from "../../../src/sandbox/read-hold.js";

/** A ReadHold whose pause and resume are recorded. */
function recorded() {
  const events: string[] = [];
  const hold = new ReadHold(
    () => events.push("pause"),
    () => events.push("resume"),
  );
  return { hold, events };
}

/** A promise and the functions that settle it. */
function deferred() {
  let resolve = () => {};
  let reject = (_err: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("ReadHold", () => {
  it("ignores anything but a promise", () => {
    const { hold, events } = recorded();
    for (const value of [undefined, 3, true, "x", null, {}]) hold.honour(value);
    expect(events).toEqual([]);
    expect(hold.held).toBe(false);
  });

  it("pauses at the first promise and resumes once every one has settled, rejected ones too", async () => {
    const { hold, events } = recorded();
    const a = deferred();
    const b = deferred();
    hold.honour(a.promise);
    hold.honour(b.promise);
    expect(events).toEqual(["pause"]);
    expect(hold.held).toBe(true);
    a.resolve();
    await tick();
    expect(events).toEqual(["pause"]);
    b.reject(new Error("disk"));
    await tick();
    expect(events).toEqual(["pause", "resume"]);
    expect(hold.held).toBe(false);
    hold.honour(Promise.resolve());
    await tick();
    expect(events).toEqual(["pause", "resume", "pause", "resume"]);
  });

  it("end resumes a held reading at once; later settlements and promises do nothing", async () => {
    const { hold, events } = recorded();
    const a = deferred();
    hold.honour(a.promise);
    hold.end();
    expect(events).toEqual(["pause", "resume"]);
    expect(hold.held).toBe(false);
    a.resolve();
    hold.honour(deferred().promise);
    hold.end();
    await tick();
    expect(events).toEqual(["pause", "resume"]);
  });

  it("end without a hold does not resume", () => {
    const { hold, events } = recorded();
    hold.end();
    expect(events).toEqual([]);
  });
});
