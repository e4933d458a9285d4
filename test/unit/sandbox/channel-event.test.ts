import { describe, expect, it } from "vitest";
import { channelEventLine } from "../../../src/sandbox/channel-event.js";

describe("channelEventLine", () => {
  it("logs each event beside the session's exec path line", () => {
    const base = { pod: "warden-s1", sessionId: "s1", reason: "code 1006", reconnects: 0 };
    expect(channelEventLine({ ...base, outcome: "lost" })).toBe(
      "warden serve: session s1: the exec stream of Pod warden-s1 ended (code 1006); re-opening its channel",
    );
    expect(channelEventLine({ ...base, outcome: "reopened", reconnects: 1, attempts: 2 })).toBe(
      "warden serve: session s1 calls go through channel again: Pod warden-s1's exec channel re-opened (reconnect 1, after 2 attempt(s))",
    );
    expect(channelEventLine({ ...base, outcome: "failed", error: "gone", final: true })).toBe(
      "warden serve: session s1: Pod warden-s1's exec channel not re-opened (gone); its calls fail from now on",
    );
  });
});
