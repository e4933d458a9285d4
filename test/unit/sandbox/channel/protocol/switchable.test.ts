/**
 * switchableTransport (protocol/switchable.ts) with two recording transports: what goes where
 * before and after the move, and that reading held with `pause` stays held across it.
 */
import { describe, expect, it } from "vitest";
import type { ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { switchableTransport } from "../../../../../src/sandbox/channel/protocol/switchable.js";

type Sinks = Parameters<ChannelTransport["start"]>[0];

function recording(name: string) {
  const calls: string[] = [];
  let sinks: Sinks | undefined;
  const transport: ChannelTransport = {
    name,
    write: (chunk) => void calls.push(`write ${chunk.toString()}`),
    start: (s) => {
      sinks = s;
      calls.push("start");
    },
    close: () => void calls.push("close"),
    pause: () => void calls.push("pause"),
    resume: () => void calls.push("resume"),
  };
  return {
    transport,
    calls,
    emit: (text: string) => sinks?.onData(Buffer.from(text)),
    end: () => sinks?.onClose("gone"),
  };
}

function started() {
  const first = recording("attach");
  const next = recording("socket");
  const switchable = switchableTransport(first.transport);
  const data: string[] = [];
  const closed: string[] = [];
  switchable.start({ onData: (c) => data.push(c.toString()), onClose: (r) => closed.push(r) });
  return { first, next, switchable, data, closed };
}

describe("switchableTransport", () => {
  it("writes and reads on the first transport until the move, then only on the next", () => {
    const { first, next, switchable, data, closed } = started();
    switchable.write(Buffer.from("a"));
    first.emit("1");
    switchable.moveTo(next.transport);
    switchable.write(Buffer.from("b"));
    first.emit("stderr-only");
    next.emit("2");
    first.end();
    expect({ name: switchable.name, first: first.calls, next: next.calls, data, closed }).toEqual({
      name: "socket",
      first: ["start", "write a"],
      next: ["start", "write b"],
      data: ["1", "2"],
      closed: [],
    });
    next.end();
    expect({ closed, firstClosed: first.calls.at(-1) }).toEqual({ closed: ["gone"], firstClosed: "close" });
  });

  it("keeps reading held across the move, and reads the first transport on (its diagnostics)", () => {
    const { first, next, switchable } = started();
    switchable.pause?.();
    switchable.moveTo(next.transport);
    expect({ first: first.calls, next: next.calls }).toEqual({
      first: ["start", "pause", "resume"],
      next: ["start", "pause"],
    });
    switchable.resume?.();
    expect(next.calls.at(-1)).toBe("resume");
  });

  it("leaves the next transport alone when reading was not held", () => {
    const { next, switchable } = started();
    switchable.pause?.();
    switchable.resume?.();
    switchable.moveTo(next.transport);
    expect(next.calls).toEqual(["start"]);
  });

  it("closes what it is handed when the first transport ended before the move", () => {
    const { first, next, switchable, closed } = started();
    first.end();
    switchable.moveTo(next.transport);
    expect({ closed, next: next.calls }).toEqual({ closed: ["gone"], next: ["start", "close"] });
  });
});
